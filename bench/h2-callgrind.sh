#!/usr/bin/env bash
# Instructions per HTTP/2 request through `larder route --threads 1` over TLS (ALPN h2),
# counted by callgrind: a steadier figure than CPU time on a shared machine. The set-up of
# bench/h2load-vs-haproxy.sh: one nginx back-end worker serving a 1 KB file, h2load (one
# thread, CLIENTS connections × STREAMS streams) with the router tests' certificate. Each
# router is warmed with WARMUP requests, its counters zeroed, then REQUESTS requests are
# counted (their connections' TLS handshakes included: 50 in 5,000 requests by default).
#
# Settings (environment): LARDER (path to a release binary; built if unset),
# LARDER_BASELINE (another binary, e.g. the parent's: counted the same way, and the ratio
# printed), REQUESTS (5000), WARMUP (2000), CLIENTS (50), STREAMS (10). Installs valgrind,
# h2load (nghttp2-client) and nginx with apt-get when missing. Touches only loopback.
set -euo pipefail

REQUESTS=${REQUESTS:-5000}
WARMUP=${WARMUP:-2000}
CLIENTS=${CLIENTS:-50}
STREAMS=${STREAMS:-10}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
certs="$root/crates/router/tests/tls"
ensure_tools valgrind h2load:nghttp2-client nginx
larder=$(larder_binary "$root")

start_work
chmod a+rx "$work"
mkdir -p "$work/site" "$work/nginx"
head -c 1024 /dev/urandom >"$work/site/1.bin"
cp "$certs/localhost.pem" "$work/cert.pem"
cp "$certs/localhost.key" "$work/key.pem"
chmod -R a+rX "$work"
start_nginx_site "$(tool_path nginx)" 4096 "keepalive_requests 1000000; keepalive_timeout 600s;"

# count NAME BINARY: "NAME: N instructions per request (R requests)".
count() {
    local port pid ok total
    port=$(free_port)
    valgrind --tool=callgrind --callgrind-out-file="$work/$1.out" "$2" route \
        --listen "127.0.0.1:$(free_port)" --admin "" --tls-listen "127.0.0.1:$port" \
        --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" \
        --node "127.0.0.1:$origin_port" --threads 1 2>"$work/$1.log" &
    pid=$!
    pids+=("$pid")
    # Under valgrind the router takes a while to start.
    wait_port "$port" 30
    h2load -t 1 -c "$CLIENTS" -m "$STREAMS" -n "$WARMUP" "https://127.0.0.1:$port/1.bin" >/dev/null
    callgrind_control --zero "$pid" >/dev/null 2>&1
    ok=$(h2load -t 1 -c "$CLIENTS" -m "$STREAMS" -n "$REQUESTS" "https://127.0.0.1:$port/1.bin" |
        awk '/^requests:/ { print $8 }')
    callgrind_control --dump=measured "$pid" >/dev/null 2>&1
    kill -TERM "$pid"
    wait "$pid" || true
    total=$(awk '/^desc: Trigger: .*measured/ {m = 1} m && /^summary:/ {print $2; exit}' "$work/$1.out".*)
    echo "$1: $((total / ok)) instructions per request ($ok requests)"
}

a=$(count larder "$larder")
echo "$a"
if [ -n "${LARDER_BASELINE:-}" ]; then
    b=$(count baseline "$LARDER_BASELINE")
    echo "$b"
    python3 -c 'import sys; a = float(sys.argv[1].split()[1]); b = float(sys.argv[2].split()[1]); print(f"larder/baseline instructions per request: {a / b:.3f}")' "$a" "$b"
fi
