#!/usr/bin/env bash
# Peers against a router tier: `larder up --peers` (every node a peer that takes clients
# and forwards the rest, no router) and `larder up` (the same nodes behind one router),
# each serving the synthetic store with the `larder bench` line it prints, side by side
# A B A B. Per run: req/s, MB/s, errors and the nodes' cache hit ratio (from their load
# reports, read before and after).
#
# On one loopback (the default) no link limits anything: this compares placement (hit
# ratio) and the cost of the extra process boundary, not links. With HOSTS=1 every node,
# peer and router is on a host of its own (`larder up --hosts`, needs root) whose link is
# LINK_RATE each way, and the load generator on a client host whose link is
# CLIENT_LINK_RATE, wider, as a site's many clients are: the router tier's one router host
# has the same link as each node, and the peers take clients on every node's link. The
# load is split over SPREAD `larder bench` processes on the client host, each with
# USERS/SPREAD users: with peers, one to each peer's address in turn (the layer-4 switch
# of the scalable content-aware distribution paper); with the router tier, all to the
# router.
#
# Settings (environment): LARDER (release binary; built if unset), NODES (4), CACHE_MB
# (16; 64 with HOSTS=1, the store being then `larder up`'s default), SECONDS_EACH (10),
# WARMUP_SECONDS (as SECONDS_EACH), ROUNDS (2), USERS (10; 32 with HOSTS=1), STORE_DIR (a
# temporary directory; `larder up`'s default store with HOSTS=1), HOSTS (unset), LINK_RATE
# (100mbit), CLIENT_LINK_RATE (1gbit), SPREAD (NODES). Touches only loopback, or with
# HOSTS=1 only the namespaces `larder up --hosts` creates and removes.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
LARDER=$(larder_binary "$ROOT")
NODES=${NODES:-4}
HOSTS=${HOSTS:-}
SECONDS_EACH=${SECONDS_EACH:-10}
WARMUP_SECONDS=${WARMUP_SECONDS:-$SECONDS_EACH}
ROUNDS=${ROUNDS:-2}
LINK_RATE=${LINK_RATE:-100mbit}
CLIENT_LINK_RATE=${CLIENT_LINK_RATE:-1gbit}
SPREAD=${SPREAD:-$NODES}
WORK=$(mktemp -d)
UP_PID=
up_flags=(--nodes "$NODES")
if [ -n "$HOSTS" ]; then
    CACHE_MB=${CACHE_MB:-64}
    USERS=${USERS:-32}
    # One generator thread each: SPREAD processes share the client host's cores.
    threads=(--threads 1)
    up_flags+=(--hosts --link-rate "$LINK_RATE" --client-link-rate "$CLIENT_LINK_RATE")
    [ -n "${STORE_DIR:-}" ] && up_flags+=(--store-dir "$STORE_DIR")
else
    CACHE_MB=${CACHE_MB:-16}
    USERS=${USERS:-10}
    SPREAD=1
    threads=()
    up_flags+=(--listen 127.0.0.1:0 --store-dir "${STORE_DIR:-$WORK/store}")
fi
up_flags+=(--cache-mb "$CACHE_MB")
cleanup() {
    if [ -n "$UP_PID" ]; then kill -TERM "$UP_PID" 2>/dev/null || true; wait "$UP_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# on_client: the prefix that runs a command where the clients are (`larder up` names it).
on_client=()

# hits_misses ADDR...: the nodes' hits and misses, summed: "HITS MISSES".
hits_misses() {
    local h=0 m=0 a j
    for a in "$@"; do
        j=$("${on_client[@]}" curl -s --max-time 5 "http://$a/.larder/load")
        h=$((h + $(echo "$j" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["hits"])')))
        m=$((m + $(echo "$j" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["misses"])')))
    done
    echo "$h $m"
}

# load SECONDS TAG: SPREAD `larder bench` processes at once, each for SECONDS, one to each
# of $targets in turn, each writing its report to $WORK/TAG-I.json.
load() {
    local seconds=$1 tag=$2 i bench=() users=$((USERS / SPREAD))
    [ "$users" -ge 1 ] || users=1
    for i in $(seq 0 $((SPREAD - 1))); do
        # shellcheck disable=SC2086
        "${on_client[@]}" "$LARDER" $load_line --url "${targets[$((i % ${#targets[@]}))]}" \
            --users "$users" "${threads[@]}" --duration "${seconds}s" --json "$WORK/$tag-$i.json" \
            >/dev/null &
        bench+=($!)
    done
    for i in "${bench[@]}"; do wait "$i"; done
}

# run SYSTEM: one measured run of `larder up` (router) or `larder up --peers` (peers).
run() {
    local system=$1 flags=() out="$WORK/up-$1.out" i nodes before after
    [ "$system" = peers ] && flags=(--peers)
    "$LARDER" up "${flags[@]}" "${up_flags[@]}" >"$out" 2>&1 &
    UP_PID=$!
    for i in $(seq 1 600); do
        grep -q 'larder up: ready' "$out" && break
        kill -0 "$UP_PID" 2>/dev/null || { cat "$out" >&2; exit 1; }
        sleep 0.2
    done
    grep -q 'larder up: ready' "$out" || { cat "$out" >&2; exit 1; }
    on_client=()
    if [ -n "$HOSTS" ]; then
        read -r -a on_client < <(sed -n 's/^ *client .*(run commands there: \(.*\) COMMAND)$/\1/p' "$out")
    fi
    # The printed line less what each process is given here.
    load_line=$(sed -n 's/^ *load *.*larder bench /bench /p' "$out" |
        sed -e 's/--url [^ ]*//' -e 's/--duration [^ ]*//')
    if [ "$system" = peers ]; then
        mapfile -t nodes < <(awk '$1 == "peer" { print $5 }' "$out")
        mapfile -t targets < <(awk '$1 == "peer" { print $3 }' "$out")
    else
        mapfile -t nodes < <(awk '$1 == "node" { sub("http://", "", $3); print $3 }' "$out")
        mapfile -t targets < <(awk '$1 == "router" { print $2 }' "$out")
    fi
    load "$WARMUP_SECONDS" warm   # fills the caches as the run will use them
    read -r -a before < <(hits_misses "${nodes[@]}")
    load "$SECONDS_EACH" run
    read -r -a after < <(hits_misses "${nodes[@]}")
    kill -TERM "$UP_PID"; wait "$UP_PID" || true; UP_PID=
    /usr/bin/python3 - "$system" "$WORK" "$((after[0] - before[0]))" "$((after[1] - before[1]))" <<'PY'
import glob, json, sys
system, work, hits, misses = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rps = mbps = errors = 0.0
for path in glob.glob(f"{work}/run-*.json"):
    total = json.load(open(path))  # the summary is flattened into the report
    rps += total["throughput_rps"]
    mbps += total["throughput_mbps"]
    errors += total["errors"]["total"]
ratio = hits / (hits + misses) if hits + misses else 0.0
print(f"| {system} | {rps:.0f} | {mbps:.1f} | {ratio:.3f} | {errors:.0f} |")
PY
    rm -f "$WORK"/run-*.json "$WORK"/warm-*.json
}

if [ -n "$HOSTS" ]; then
    where="hosts of their own, each host's link $LINK_RATE, the client host's $CLIENT_LINK_RATE, load over $SPREAD processes"
else
    where="one loopback"
fi
echo "larder up vs larder up --peers: $NODES nodes of $CACHE_MB MiB, $USERS users, ${SECONDS_EACH}s each after ${WARMUP_SECONDS}s of warm-up, $ROUNDS rounds, $where"
echo "| system | req/s | Mbit/s | hit ratio | errors |"
echo "|---|---:|---:|---:|---:|"
for _ in $(seq 1 "$ROUNDS"); do
    run router
    run peers
done
