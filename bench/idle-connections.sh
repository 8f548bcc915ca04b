#!/usr/bin/env bash
# What idle keep-alive client connections cost larder route, and whether it gives the
# memory back: a node and a router on free loopback ports, then
#
# 1. the router's RSS once warmed up (a few requests), the "idle level";
# 2. CONNECTIONS keep-alive connections opened, each doing one GET of a 1 KB file and then
#    left idle: the router's RSS with all of them open, and the cost per connection;
# 3. every connection closed: the router's RSS again, as a ratio to the idle level.
#
# Prints the three RSS figures (from /proc/PID/status, VmRSS) and the two derived ones.
# Settings (environment): CONNECTIONS (5000), THREADS router worker threads (2), LARDER
# (path to a release binary; built if unset). Takes a few seconds. Touches only loopback.
set -euo pipefail

CONNECTIONS=${CONNECTIONS:-5000}
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

# The client, in Python: warm-up, then the connections (one GET each, left open), then
# closing them; the router's RSS read at each step once it has stopped moving.
python3 - "$router" "$route_port" "$CONNECTIONS" <<'EOF'
import resource, socket, sys, time
pid, port, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
req = b"GET /f.txt HTTP/1.1\r\nHost: bench\r\n\r\n"

def rss_kb():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

def settled_rss():
    """RSS once it has not moved for 3 s (at most 20 s): the router returns freed memory
    to the kernel within a second or two of a burst."""
    last, since, start = rss_kb(), time.time(), time.time()
    while time.time() - since < 3.0 and time.time() - start < 20:
        time.sleep(0.1)
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

for _ in range(20):
    s = socket.create_connection(("127.0.0.1", port))
    get(s)
    s.close()
idle = settled_rss()
conns = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    get(s)
    conns.append(s)
with_open = settled_rss()
for s in conns:
    s.close()
after = settled_rss()
print(f"connections            {n}")
print(f"RSS idle               {idle / 1024:.1f} MiB")
print(f"RSS with all open      {with_open / 1024:.1f} MiB")
print(f"RSS after close        {after / 1024:.1f} MiB")
print(f"per idle connection    {(with_open - idle) * 1024 / n / 1000:.1f} KB")
print(f"after close / idle     {after / idle:.2f}")
EOF
