#!/usr/bin/env bash
# The operator's view, checked as a person would see it: starts three larder nodes and a
# router on loopback, sends traffic, loads the router's dashboard (GET / on its admin
# address) in headless Chromium, checks that the rendered page shows every node and a
# non-zero request rate, saves a screenshot, and runs `promtool check metrics` on the
# router's and a node's /metrics. Installs chromium and prometheus (for promtool) when
# they are missing.
#
# Usage: scripts/check-cockpit.sh [SCREENSHOT.png]   (default: target/cockpit/dashboard.png)
# The larder binary is $LARDER, else a debug build of this checkout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../bench/lib.sh
. "$root/bench/lib.sh"
shot=${1:-$root/target/cockpit/dashboard.png}
mkdir -p "$(dirname "$shot")"

ensure_tools chromium
command -v promtool >/dev/null 2>&1 || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends prometheus >/dev/null
}
if [ -z "${LARDER:-}" ]; then
    (cd "$root" && cargo build -q -p larder)
    LARDER=${CARGO_TARGET_DIR:-$root/target}/debug/larder
fi

start_work
mkdir -p "$work/www"
for i in $(seq 1 40); do head -c $((i * 300)) /dev/zero | tr '\0' 'x' >"$work/www/doc$i.html"; done
node_ports=()
for _ in 1 2 3; do
    start_larder_node "$LARDER" "$work/www"
    node_ports+=("$node_port")
done
port=$(free_port)
admin=$(free_port)
# Nodes from a config file, so the router polls their load reports (hit ratio, cache fill).
{
    echo 'name = "cockpit"'
    for p in "${node_ports[@]}"; do
        printf '[[nodes]]\naddr = "127.0.0.1:%s"\nload_report = true\n' "$p"
    done
} >"$work/router.toml"
"$LARDER" route --config "$work/router.toml" --listen "127.0.0.1:$port" \
    --admin "127.0.0.1:$admin" --policy lard-r 2>>"$work/route.err" &
pids+=($!)
wait_port "$port"
wait_port "$admin"

# Traffic while the page is open: keep-alive GETs over the documents, hot ones more
# often, for at most 60 s (the loop ends when the page has been checked).
python3 - "$port" "$work/stop" <<'PY' &
import http.client, os, sys, time
port, stop = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
end = time.time() + 60
i = 0
while time.time() < end and not os.path.exists(stop):
    doc = 1 + (i * i) % 40 if i % 3 else 1 + i % 4
    c.request("GET", f"/doc{doc}.html")
    c.getresponse().read()
    i += 1
    time.sleep(0.002)
PY
load=$!
pids+=("$load")

chrome=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars
    --no-first-run --user-data-dir="$work/chrome" --window-size=1400,1000)
url="http://127.0.0.1:$admin/"
# Give the page two polls (a rate needs two snapshots) before the DOM is read.
sleep 1
"${chrome[@]}" --virtual-time-budget=4000 --dump-dom "$url" >"$work/dom.html" 2>"$work/chrome.err"
"${chrome[@]}" --virtual-time-budget=4000 --screenshot="$shot" "$url" >/dev/null 2>>"$work/chrome.err"
touch "$work/stop"

python3 - "$work/dom.html" "${node_ports[@]}" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
fail = []
for port in sys.argv[2:]:
    row = re.search(r'<tr data-node="127\.0\.0\.1:%s">(.*?)</tr>' % port, dom)
    if not row:
        fail.append(f"no row for node 127.0.0.1:{port}")
        continue
    if '<span class="state up">up</span>' not in row.group(1):
        fail.append(f"node 127.0.0.1:{port} is not shown up")
rate = re.search(r'<b id="total-rate">([0-9.]+)</b>', dom)
if not rate or float(rate.group(1)) <= 0:
    fail.append(f"no non-zero request rate: {rate.group(1) if rate else 'missing'}")
if fail:
    print("dashboard check failed:", *fail, sep="\n  ")
    sys.exit(1)
print(f"dashboard: {len(sys.argv) - 2} nodes shown up, {rate.group(1)} req/s")
PY
[ -s "$shot" ] || { echo "no screenshot written" >&2; exit 1; }
echo "dashboard screenshot: $shot"

curl -sf "http://127.0.0.1:$admin/metrics" >"$work/router.prom"
curl -sf "http://127.0.0.1:${node_ports[0]}/.larder/metrics" >"$work/node.prom"
for f in router node; do
    promtool check metrics <"$work/$f.prom"
    grep -q '_bucket{' "$work/$f.prom"
done
grep -q '^larder_route_request_duration_seconds_bucket{node=' "$work/router.prom"
grep -q '^larder_route_upstream_duration_seconds_count{node=' "$work/router.prom"
echo "promtool check metrics: router and node pass"
