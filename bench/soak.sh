#!/usr/bin/env bash
# A soak of larder route: two larder nodes and a router on free loopback ports, the
# router's capacity measured first (closed loop, 5 s), then an open-loop load at LOAD of it
# for DURATION seconds, while the router's RSS and open file descriptors are printed every
# INTERVAL seconds, the descriptors split into client connections, upstream connections
# (to the nodes, in flight or pooled) and everything else (files, pipes, epoll, listeners).
#
# At the end: failed requests (must be 0), and whether RSS and descriptors are flat over
# the last WINDOW seconds, that is, whether they leak. A leak is a trend, so the check is
# the least-squares line through the samples: how far it rises or falls across the window,
# as a share of the mean (must be within 10%); RSS must also stay within 10% sample to
# sample, and the descriptors that are not sockets must not move at all. The spread of the
# socket count ((max - min) / min) is printed but not checked: it includes the upstream
# connections, and their number follows the load, not time. Under an open-loop load the
# requests in flight come in bursts; a burst takes pooled connections from the top of a
# node's pool (last in, first out) and connects more when the pool runs dry, and a pooled
# connection that sat unused past timeouts.pool_idle_ms is closed when a burst reaches it.
# So the count moves between the usual and the largest recent burst (at most one per
# client connection and node) from sample to sample, with no trend.
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
node_ports=()
for _ in 1 2; do
    start_larder_node "$larder" "$work/www"
    nodes+=(--node "127.0.0.1:$node_port")
    node_ports+=("$node_port")
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
# classify: the router's descriptors as "fds clients upstream other": client connections
# have the router's port as their local port, upstream ones a node's as their remote port
# (read from /proc: the socket inodes of the process against /proc/net/tcp).
classify() {
    python3 - "$router" "$route_port" "${node_ports[@]}" <<'EOF'
import os, sys
pid, listen, nodes = sys.argv[1], int(sys.argv[2]), {int(p) for p in sys.argv[3:]}
links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
inodes = {l[8:-1] for l in links if l.startswith("socket:[")}
clients = upstream = 0
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(table).readlines()[1:]:
        f = line.split()
        if f[9] not in inodes:
            continue
        local, remote = int(f[1].rsplit(":", 1)[1], 16), int(f[2].rsplit(":", 1)[1], 16)
        clients += local == listen and remote != 0
        upstream += remote in nodes
print(len(links), clients, upstream, len(links) - len(inodes))
EOF
}
printf '%8s %10s %6s %8s %9s %6s\n' seconds rss_kib fds clients upstream other
start=$(date +%s)
while kill -0 "$load" 2>/dev/null; do
    sleep "$INTERVAL"
    kill -0 "$load" 2>/dev/null || break
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$router/status")
    read -r fds clients upstream other < <(classify)
    printf '%8d %10d %6d %8d %9d %6d\n' $(($(date +%s) - start)) "$rss" "$fds" "$clients" \
        "$upstream" "$other" | tee -a "$work/samples"
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
def trend(i):
    """How far the least-squares line rises (or falls) across the window, / the mean."""
    xs, ys = [row[0] for row in last], [row[i] for row in last]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return slope * (xs[-1] - xs[0]) / my
print(f"requests {r['requests']}, {r['throughput_rps']:.0f} req/s, failed {failed}")
print(f"over the last {window} s ({len(last)} samples): min..max, trend, spread")
for name, i in [("RSS KiB", 1), ("descriptors", 2), ("  client connections", 3),
                ("  upstream connections", 4), ("  other", 5)]:
    values = [row[i] for row in last]
    print(f"  {name:24} {min(values):>7}..{max(values):<7} {trend(i):+6.1%} {spread(i):6.1%}")
ok = (failed == 0 and abs(trend(1)) <= 0.10 and abs(trend(2)) <= 0.10
      and spread(1) <= 0.10 and spread(5) == 0)
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
EOF
