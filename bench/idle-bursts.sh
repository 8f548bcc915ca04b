#!/usr/bin/env bash
# Whether larder route gives the memory of a burst of idle keep-alive clients back, every
# time: one node and one router on free loopback ports, then BURSTS times
#
# 1. the router's RSS once it has settled ("before");
# 2. CONNECTIONS keep-alive connections opened (speaking PROTOCOL), each doing one GET of a 1 KB file and then
#    left idle: the router's RSS with all of them open;
# 3. every connection closed (spread over CLOSE_SECONDS, as clients that leave over a
#    moment rather than at once), then /proc/PID/status polled every 100 ms for 15 s:
#    the time until RSS is within 1.3x of "before" (or "not within 15 s"), and the RSS at
#    15 s as a ratio to the idle level (the RSS before the first burst).
#
# Ends with "N of M bursts back within 1.3x in 15 s", and how many were within 1.3x of
# the idle level at 15 s (a burst whose memory was kept raises the next one's "before").
# bench/idle-connections.sh measures one burst's cost per connection. Settings
# (environment): BURSTS (10), CONNECTIONS (5000), PROTOCOL (http1; h2c is HTTP/2 by
# prior knowledge, h2 is HTTP/2 over TLS by ALPN), CLOSE_SECONDS (0), THREADS router
# worker threads (2), TARGET (route; node measures larder node alone, its clients
# connecting straight to it, HTTP/1.1 only), LARDER (path to a release binary; built if
# unset). Takes about 25 s a burst. Touches only loopback.
set -euo pipefail

BURSTS=${BURSTS:-10}
CONNECTIONS=${CONNECTIONS:-5000}
CLOSE_SECONDS=${CLOSE_SECONDS:-0}
THREADS=${THREADS:-2}
PROTOCOL=${PROTOCOL:-http1}
TARGET=${TARGET:-route}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
larder=$(larder_binary "$root")

start_work
small_docroot
start_larder_node "$larder" "$work/www"
case $TARGET in
route) start_idle_route "$larder" "$PROTOCOL" --threads "$THREADS" ;;
node)
    # The node alone, its clients connecting straight to it (it speaks HTTP/1.1 only).
    [ "$PROTOCOL" = http1 ] || { echo "TARGET=node takes PROTOCOL=http1 only" >&2; exit 1; }
    router=${pids[-1]}
    client_port=$node_port
    ;;
*)
    echo "TARGET must be route or node" >&2
    exit 1
    ;;
esac

PYTHONPATH="$here" python3 - "$router" "$client_port" "$CONNECTIONS" "$BURSTS" "$CLOSE_SECONDS" "$PROTOCOL" <<'EOF'
import sys, time
from idle_clients import POLL, open_idle, raise_fd_limit, rss_kb, warm_up
from idle_clients import settled_rss as settled
pid, port, n, bursts = (int(a) for a in sys.argv[1:5])
close_seconds = float(sys.argv[5])
protocol = sys.argv[6]
raise_fd_limit()
RATIO, WINDOW = 1.3, 15.0
settled_rss = lambda: settled(pid, 2.0)

mib = lambda kb: f"{kb / 1024:5.1f} MiB"
warm_up(port, protocol)
idle = settled_rss()
print(f"connections {n} ({protocol}), closed over {close_seconds:g} s, bursts {bursts}, idle level {mib(idle)}", flush=True)
back = back_to_idle = 0
for b in range(1, bursts + 1):
    before = settled_rss()
    conns = open_idle(port, n, protocol)
    with_open = settled_rss()
    start = time.time()
    for i, s in enumerate(conns):
        s.close()
        if close_seconds and i % 100 == 99:
            time.sleep(max(0.0, start + close_seconds * (i + 1) / n - time.time()))
    closed = time.time()
    conns = None
    took = None
    while time.time() - closed < WINDOW:
        now = rss_kb(pid)
        if took is None and now <= RATIO * before:
            took = time.time() - closed
        time.sleep(POLL)
    at_end = rss_kb(pid)
    back += took is not None
    back_to_idle += at_end <= RATIO * idle
    verdict = f"back in {took:4.1f} s" if took is not None else "not within 15 s"
    print(f"burst {b:2}: before {mib(before)}, all open {mib(with_open)}, "
          f"at 15 s {mib(at_end)} ({at_end / idle:.2f}x idle), {verdict}", flush=True)
print(f"{back} of {bursts} bursts back within {RATIO}x in {WINDOW:.0f} s")
print(f"{back_to_idle} of {bursts} bursts within {RATIO}x of the idle level at {WINDOW:.0f} s")
EOF
