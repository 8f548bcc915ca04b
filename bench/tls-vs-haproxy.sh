#!/usr/bin/env bash
# larder route's TLS termination, checked and measured against HAProxy's (`ssl crt`), all
# on free loopback ports, in front of one larder node:
#
# 1. curl --cacert fetches a 1 MiB file through `larder route --tls-listen` and compares it
#    byte for byte with the file on disk;
# 2. under wrk load over TLS, the certificate files are replaced by a renewed certificate
#    (signed by another CA) and the router gets SIGHUP: wrk's errors are printed (must be
#    0), then curl checks that the renewed certificate is served;
# 3. the cost per request: wrk keep-alive on a 1 KB file, plain HTTP and HTTPS, through
#    larder route (one thread) and HAProxy (nbthread 1), alternating, ROUNDS times; the
#    CPU time each proxy spent per request (from /proc), the TLS cost (HTTPS minus plain)
#    and the ratios larder / HAProxy.
#
# The certificates are the router tests' (crates/router/tests/tls). Settings
# (environment): ROUNDS (2), DURATION seconds per wrk run (5), CONNECTIONS (50), LARDER
# (path to a release binary; built if unset). Installs haproxy and wrk with apt-get when
# missing. Touches only loopback.
set -euo pipefail

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-50}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
certs="$root/crates/router/tests/tls"
ensure_tools haproxy wrk curl
larder=$(larder_binary "$root")

start_work

mkdir -p "$work/www"
head -c 1024 /dev/urandom >"$work/www/f.bin"
head -c $((1 << 20)) /dev/urandom >"$work/www/big.bin"
cp "$certs/localhost.pem" "$work/cert.pem"
cp "$certs/localhost.key" "$work/key.pem"
start_larder_node "$larder" "$work/www"
plain_port=$(free_port)
tls_port=$(free_port)
start_larder_route "$larder" "$plain_port" --tls-listen "127.0.0.1:$tls_port" \
    --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" --node "127.0.0.1:$node_port" \
    --threads 1
wait_port "$tls_port"

https() { # CA PORT PATH OUT
    curl -sS --fail --cacert "$certs/$1" --resolve "localhost:$2:127.0.0.1" \
        -o "$4" "https://localhost:$2$3"
}

echo "== 1. a file through TLS"
https first-ca.pem "$tls_port" /big.bin "$work/got.bin"
if cmp -s "$work/got.bin" "$work/www/big.bin"; then
    echo "curl --cacert fetched big.bin (1 MiB) byte-exact"
else
    echo "big.bin differs" && exit 1
fi

echo "== 2. a renewed certificate after SIGHUP, under load"
wrk -t1 -c20 -d6s "https://127.0.0.1:$tls_port/f.bin" >"$work/wrk-reload.txt" &
load=$!
sleep 3
cp "$certs/renewed.pem" "$work/cert.pem"
cp "$certs/renewed.key" "$work/key.pem"
kill -HUP "$router"
wait "$load"
grep -E "requests in|Socket errors|Non-2xx" "$work/wrk-reload.txt" || true
if grep -qE "Socket errors|Non-2xx" "$work/wrk-reload.txt"; then
    echo "failed requests during the reload" && exit 1
fi
echo "0 failed requests during the reload"
https second-ca.pem "$tls_port" /f.bin "$work/renewed.bin"
echo "the renewed certificate (second CA) is served after SIGHUP"

echo "== 3. the cost per request, larder route vs HAProxy"
cat "$certs/localhost.pem" "$certs/localhost.key" >"$work/haproxy.pem"
hp_plain=$(free_port)
hp_tls=$(free_port)
cat >"$work/haproxy.cfg" <<EOF
global
    nbthread 1
    maxconn 2000
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    option http-keep-alive
frontend plain
    bind 127.0.0.1:$hp_plain
    default_backend nodes
frontend tls
    bind 127.0.0.1:$hp_tls ssl crt $work/haproxy.pem alpn http/1.1
    default_backend nodes
backend nodes
    server n1 127.0.0.1:$node_port
EOF
"$(tool_path haproxy)" -q -f "$work/haproxy.cfg" &
haproxy=$!
pids+=("$haproxy")
wait_port "$hp_tls"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
run() { # NAME PID URL
    local before after requests
    before=$(cpu_ticks "$2")
    requests=$(wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "$3" | awk '/requests in/ { print $1 }')
    after=$(cpu_ticks "$2")
    echo "$1 $requests $(((after - before) * 1000000 / hz))" >>"$work/runs"
}
for _ in $(seq 1 "$ROUNDS"); do
    run larder-plain "$router" "http://127.0.0.1:$plain_port/f.bin"
    run haproxy-plain "$haproxy" "http://127.0.0.1:$hp_plain/f.bin"
    run larder-tls "$router" "https://127.0.0.1:$tls_port/f.bin"
    run haproxy-tls "$haproxy" "https://127.0.0.1:$hp_tls/f.bin"
done
python3 - "$work/runs" "$DURATION" <<'EOF'
import statistics, sys
runs, duration = sys.argv[1], float(sys.argv[2])
by = {}
for line in open(runs):
    name, requests, cpu_us = line.split()
    by.setdefault(name, []).append((int(requests), int(cpu_us)))
def med(name, f):
    return statistics.median(f(r, c) for r, c in by[name])
rps = {n: med(n, lambda r, c: r / duration) for n in by}
us = {n: med(n, lambda r, c: c / r) for n in by}
print(f"{'':16} {'req/s':>10} {'CPU µs/req':>11}")
for n in ["larder-plain", "haproxy-plain", "larder-tls", "haproxy-tls"]:
    print(f"{n:16} {rps[n]:>10.0f} {us[n]:>11.2f}")
tls_cost = {p: us[f"{p}-tls"] - us[f"{p}-plain"] for p in ("larder", "haproxy")}
print(f"TLS cost per request (HTTPS minus plain, CPU µs): larder {tls_cost['larder']:.2f}, "
      f"HAProxy {tls_cost['haproxy']:.2f}, ratio larder/HAProxy {tls_cost['larder'] / tls_cost['haproxy']:.2f}")
print(f"HTTPS CPU per request, ratio larder/HAProxy: {us['larder-tls'] / us['haproxy-tls']:.2f}; "
      f"HTTPS requests per second, ratio larder/HAProxy: {rps['larder-tls'] / rps['haproxy-tls']:.2f}")
EOF
