#!/usr/bin/env bash
# What idle keep-alive client connections cost larder route, and whether it gives the
# memory back: a node and a router on free loopback ports, then
#
# 1. the router's RSS once warmed up (a few requests), the "idle level";
# 2. CONNECTIONS keep-alive connections opened (speaking PROTOCOL), each doing one GET of a 1 KB file and then
#    left idle: the router's RSS with all of them open, and the cost per connection;
# 3. every connection closed: the router's RSS again, as a ratio to the idle level.
#
# Prints the three RSS figures (from /proc/PID/status, VmRSS) and the two derived ones.
# Settings (environment): CONNECTIONS (5000), PROTOCOL (http1; h2c is HTTP/2 by prior
# knowledge, h2 is HTTP/2 over TLS by ALPN), THREADS router worker threads (2), LARDER
# (path to a release binary; built if unset). Takes a few seconds. Touches only loopback.
set -euo pipefail

CONNECTIONS=${CONNECTIONS:-5000}
THREADS=${THREADS:-2}
PROTOCOL=${PROTOCOL:-http1}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
larder=$(larder_binary "$root")

start_work
small_docroot
start_larder_node "$larder" "$work/www"
start_idle_route "$larder" "$PROTOCOL" --threads "$THREADS"

# The client, in Python (bench/idle_clients.py): warm-up, then the connections (one GET each, left open), then
# closing them; the router's RSS read at each step once it has stopped moving.
PYTHONPATH="$here" python3 -c 'import sys; from idle_clients import measure_idle_cost as m; m(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], "")' \
    "$router" "$client_port" "$CONNECTIONS" "$PROTOCOL"
