#!/usr/bin/env bash
# Whether larder route gives the memory of a burst of idle keep-alive clients back, every
# time: one node and one router on free loopback ports, then BURSTS times
#
# 1. the router's RSS once it has settled ("before");
# 2. CONNECTIONS keep-alive connections opened, each doing one GET of a 1 KB file and then
#    left idle: the router's RSS with all of them open;
# 3. every connection closed (spread over CLOSE_SECONDS, as clients that leave over a
#    moment rather than at once), then /proc/PID/status polled every 100 ms for 15 s:
#    the time until RSS is within 1.3x of "before" (or "not within 15 s"), and the RSS at
#    15 s as a ratio to the idle level (the RSS before the first burst).
#
# Ends with "N of M bursts back within 1.3x in 15 s", and how many were within 1.3x of
# the idle level at 15 s (a burst whose memory was kept raises the next one's "before").
# bench/idle-connections.sh measures one burst's cost per connection. Settings
# (environment): BURSTS (10), CONNECTIONS (5000), CLOSE_SECONDS (0), THREADS router
# worker threads (2), LARDER (path to a release binary; built if unset). Takes about 25 s
# a burst. Touches only loopback.
set -euo pipefail

BURSTS=${BURSTS:-10}
CONNECTIONS=${CONNECTIONS:-5000}
CLOSE_SECONDS=${CLOSE_SECONDS:-0}
THREADS=${THREADS:-2}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
larder=$(larder_binary "$root")

start_work
small_docroot
start_larder_node "$larder" "$work/www"
route_port=$(free_port)
start_larder_route "$larder" "$route_port" --node "127.0.0.1:$node_port" --threads "$THREADS"

python3 - "$router" "$route_port" "$CONNECTIONS" "$BURSTS" "$CLOSE_SECONDS" <<'EOF'
import resource, socket, sys, time
pid, port, n, bursts = (int(a) for a in sys.argv[1:5])
close_seconds = float(sys.argv[5])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
req = b"GET /f.txt HTTP/1.1\r\nHost: bench\r\n\r\n"
RATIO, WINDOW, POLL = 1.3, 15.0, 0.1

def rss_kb():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

def settled_rss():
    """RSS once it has not moved for 2 s (at most 20 s)."""
    last, since, start = rss_kb(), time.time(), time.time()
    while time.time() - since < 2.0 and time.time() - start < 20:
        time.sleep(POLL)
        now = rss_kb()
        if now != last:
            last, since = now, time.time()
    return last

def get(s):
    s.sendall(req)
    data = b""
    while not (b"\r\n\r\n" in data and len(data.split(b"\r\n\r\n", 1)[1]) >= 1024):
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("connection closed early")
        data += chunk

mib = lambda kb: f"{kb / 1024:5.1f} MiB"
for _ in range(20):
    s = socket.create_connection(("127.0.0.1", port))
    get(s)
    s.close()
idle = settled_rss()
print(f"connections {n}, closed over {close_seconds:g} s, bursts {bursts}, idle level {mib(idle)}", flush=True)
back = back_to_idle = 0
for b in range(1, bursts + 1):
    before = settled_rss()
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        get(s)
        conns.append(s)
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
        now = rss_kb()
        if took is None and now <= RATIO * before:
            took = time.time() - closed
        time.sleep(POLL)
    at_end = rss_kb()
    back += took is not None
    back_to_idle += at_end <= RATIO * idle
    verdict = f"back in {took:4.1f} s" if took is not None else "not within 15 s"
    print(f"burst {b:2}: before {mib(before)}, all open {mib(with_open)}, "
          f"at 15 s {mib(at_end)} ({at_end / idle:.2f}x idle), {verdict}", flush=True)
print(f"{back} of {bursts} bursts back within {RATIO}x in {WINDOW:.0f} s")
print(f"{back_to_idle} of {bursts} bursts within {RATIO}x of the idle level at {WINDOW:.0f} s")
EOF
