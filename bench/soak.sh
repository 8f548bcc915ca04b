#!/usr/bin/env bash
# A soak of larder route: two larder nodes and a router on free loopback ports, the
# router's capacity measured first (closed loop, 5 s), then an open-loop load at LOAD of it
# for DURATION seconds, while the router's RSS and open file descriptors are printed every
# INTERVAL seconds. At the end: failed requests (must be 0), and how far RSS and
# descriptors moved over the last WINDOW seconds ((max - min) / min, must be within 10%).
#
# Settings (environment): DURATION seconds (600), INTERVAL seconds (10), WINDOW seconds
# (480, the last 8 minutes), LOAD fraction of capacity (0.8), USERS connections (64),
# LARDER (path to a release binary; built if unset). Touches only loopback.
set -euo pipefail

DURATION=${DURATION:-600}
INTERVAL=${INTERVAL:-10}
WINDOW=${WINDOW:-480}
LOAD=${LOAD:-0.8}
USERS=${USERS:-64}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
larder=$(larder_binary "$root")

start_work
small_docroot
nodes=()
for _ in 1 2; do
    start_larder_node "$larder" "$work/www"
    nodes+=(--node "127.0.0.1:$node_port")
done
route_port=$(free_port)
start_larder_route "$larder" "$route_port" "${nodes[@]}" --threads 1
url="http://127.0.0.1:$route_port/f.txt"

"$larder" bench --url "$url" --users 32 --duration 5s --json "$work/capacity.json" >/dev/null
capacity=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['throughput_rps'])" "$work/capacity.json")
rate=$(python3 -c "print(int($capacity * $LOAD))")
echo "capacity ${capacity%.*} req/s; soaking at $rate req/s for ${DURATION}s"

"$larder" bench --url "$url" --rate "$rate" --users "$USERS" --duration "${DURATION}s" \
    --json "$work/soak.json" >"$work/soak.out" &
load=$!
printf '%8s %10s %6s\n' seconds rss_kib fds
start=$(date +%s)
while kill -0 "$load" 2>/dev/null; do
    sleep "$INTERVAL"
    kill -0 "$load" 2>/dev/null || break
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$router/status")
    fds=$(ls "/proc/$router/fd" | wc -l)
    printf '%8d %10d %6d\n' $(($(date +%s) - start)) "$rss" "$fds" | tee -a "$work/samples"
done
wait "$load"

python3 - "$work/soak.json" "$work/samples" "$DURATION" "$WINDOW" <<'EOF'
import json, sys
report, samples, duration, window = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = json.load(open(report))
failed = r["errors"]["total"]
rows = [tuple(map(int, l.split())) for l in open(samples) if l.strip()]
last = [row for row in rows if row[0] >= duration - window] or rows
def spread(i):
    values = [row[i] for row in last]
    return (max(values) - min(values)) / min(values)
print(f"requests {r['requests']}, {r['throughput_rps']:.0f} req/s, failed {failed}")
print(f"over the last {window} s: RSS moved {spread(1):.1%}, descriptors moved {spread(2):.1%}")
ok = failed == 0 and spread(1) <= 0.10 and spread(2) <= 0.10
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
EOF
