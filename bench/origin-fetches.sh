#!/usr/bin/env bash
# What a flash crowd costs the origin through a caching cluster: starts nginx (one worker,
# logging every request) serving random files, starts `larder up --origin` in front of it
# (4 nodes, lard-r unless told otherwise), then for each object sends CLIENTS concurrent
# GETs through the router (all connected first, then released together), twice (a cold
# pass, then a warm one), checks every body byte for byte against the file and prints how
# many requests each pass cost the origin, with the nodes' peer fills so far.
#
# Usage: bench/origin-fetches.sh   (LARDER=<binary>, else a release build; NODES=4,
#        POLICY=lard-r, CLIENTS=50, SIZES_KB="600 5120")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$root/bench/lib.sh"

nodes=${NODES:-4}
policy=${POLICY:-lard-r}
clients=${CLIENTS:-50}
sizes=${SIZES_KB:-600 5120}

ensure_tools nginx curl
nginx=$(tool_path nginx)
larder=$(larder_binary "$root")

start_work
mkdir -p "$work/site" "$work/nginx"
chmod a+rx "$work"
for kb in $sizes; do
    head -c $((kb * 1024)) /dev/urandom >"$work/site/o$kb.bin"
done
chmod -R a+r "$work/site"

# Each request's URI in the origin's log, to count what each pass cost it.
start_nginx_site "$nginx" 1024 "log_format uri '\$request_uri';" \
    "access_log $work/nginx/access.log uri;"

router_port=$(free_port)
"$larder" up --origin "http://127.0.0.1:$origin_port" --nodes "$nodes" --policy "$policy" \
    --listen "127.0.0.1:$router_port" --admin 127.0.0.1:0 --store-dir "$work/store" \
    >"$work/up.out" 2>"$work/up.err" &
pids+=($!)
wait_port "$router_port" || { cat "$work/up.out" "$work/up.err" >&2; exit 1; }
for _ in $(seq 1 100); do
    grep -q 'larder up: ready' "$work/up.out" "$work/up.err" 2>/dev/null && break
    sleep 0.1
done
node_addrs=$(grep -ho 'node n[0-9]* *http://[0-9.:]*' "$work/up.out" "$work/up.err" |
    sed 's/.*http:\/\///' || true)

# crowd PATH FILE: CLIENTS concurrent GETs of PATH; fails unless every body equals FILE.
crowd() {
    /usr/bin/env python3 - "$router_port" "$1" "$2" "$clients" <<'PY'
import http.client, sys, threading
port, path, file, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
want = open(file, "rb").read()
conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=60) for _ in range(n)]
for c in conns:
    c.connect()
go = threading.Barrier(n)
bad = []
def one(c):
    go.wait()
    try:
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        if r.status != 200 or body != want:
            bad.append(f"status {r.status}, {len(body)} bytes")
    except Exception as e:
        bad.append(repr(e))
threads = [threading.Thread(target=one, args=(c,)) for c in conns]
for t in threads: t.start()
for t in threads: t.join()
if bad:
    sys.exit(f"{len(bad)} of {n} bodies wrong: {bad[:3]}")
PY
}

# origin_requests PATH: requests for PATH in the origin's log so far.
origin_requests() { grep -cx "$1" "$work/nginx/access.log" || true; }

# peer_fills: misses the nodes filled from one another so far, all together.
peer_fills() {
    local total=0 n
    for a in $node_addrs; do
        n=$(curl -s "http://$a/.larder/load" |
            python3 -c 'import json,sys; print(json.load(sys.stdin).get("peer_fills", 0))')
        total=$((total + n))
    done
    echo "$total"
}

echo "larder up --origin … --nodes $nodes --policy $policy; $clients concurrent GETs per pass"
printf '%-10s %-6s %16s %14s %11s\n' object pass origin-requests origin-total peer-fills
for kb in $sizes; do
    path=/o$kb.bin
    for pass in cold warm; do
        before=$(origin_requests "$path")
        crowd "$path" "$work/site/o$kb.bin"
        after=$(origin_requests "$path")
        printf '%-10s %-6s %16s %14s %11s\n' "${kb}KB" "$pass" "$((after - before))" \
            "$after" "$(peer_fills)"
    done
done
echo "every body byte-exact"
