#!/usr/bin/env bash
# The floor under an idle HTTP/2 connection: what the libraries larder's front door is
# built on cost per idle connection with nothing of larder around them. A bare server on
# the `h2` crate (crates/router/examples/h2_idle_floor.rs; with PROTOCOL=h2, over rustls
# configured as the router configures it) answers 1 KB to every request; the same clients
# as bench/idle-connections.sh open CONNECTIONS connections, one GET each, and leave them
# idle. Compare its "per idle connection" with bench/idle-connections.sh's for the router.
#
# Settings (environment): CONNECTIONS (5000), PROTOCOL (h2c, or h2 for HTTP/2 over TLS by
# ALPN). Builds the example (release) if needed. Takes a few seconds. Touches only loopback.
set -euo pipefail

CONNECTIONS=${CONNECTIONS:-5000}
PROTOCOL=${PROTOCOL:-h2c}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)

(cd "$root" && cargo build --release -q -p router --example h2_idle_floor) >&2
floor="${CARGO_TARGET_DIR:-$root/target}/release/examples/h2_idle_floor"
case $PROTOCOL in
h2c) args=() ;;
h2) args=(--tls "$root/crates/router/tests/tls/localhost.pem" "$root/crates/router/tests/tls/localhost.key") ;;
*)
    echo "PROTOCOL must be h2c or h2" >&2
    exit 1
    ;;
esac

start_work
"$floor" "${args[@]}" >"$work/floor.out" &
pids+=($!)
server=$!
port=
for _ in $(seq 1 100); do
    port=$(sed -n 's/^listening on 127.0.0.1://p' "$work/floor.out")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "the floor server did not start" >&2; exit 1; }

PYTHONPATH="$here" python3 -c 'import sys; from idle_clients import measure_idle_cost as m; m(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], ", bare h2 server")' \
    "$server" "$port" "$CONNECTIONS" "$PROTOCOL"
