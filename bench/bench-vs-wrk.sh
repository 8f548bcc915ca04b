#!/usr/bin/env bash
# larder bench against wrk, both driving nginx serving a 1 KB file on a free loopback port.
#
# Runs wrk (A) and `larder bench` (B) alternately, A B A B, with the same connections,
# threads and duration, prints each run's requests per second and the median ratio
# larder/wrk, and fails when that ratio is below MIN_RATIO (default 0.9).
#
# Settings (environment): PAIRS (3), CONNECTIONS (32), THREADS (2), DURATION seconds (5),
# NGINX_WORKERS (1), MIN_RATIO (0.9), LARDER (path to a release binary; built if unset).
# Installs nginx and wrk with apt-get when missing. Touches only loopback.
set -euo pipefail

PAIRS=${PAIRS:-3}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
DURATION=${DURATION:-5}
NGINX_WORKERS=${NGINX_WORKERS:-1}
MIN_RATIO=${MIN_RATIO:-0.9}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

. "$ROOT/bench/lib.sh"
ensure_tools nginx wrk
NGINX=$(tool_path nginx)

LARDER=$(larder_binary "$ROOT")

WORK=$(mktemp -d)
cleanup() {
    if [ -s "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/www" "$WORK/tmp"
chmod 755 "$WORK" "$WORK/www"   # nginx workers run as an unprivileged user
head -c 1024 /dev/zero | tr '\0' 'x' >"$WORK/www/1k.html"
PORT=$(free_port)
cat >"$WORK/nginx.conf" <<CONF
worker_processes $NGINX_WORKERS;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_body_temp_path $WORK/tmp;
    proxy_temp_path $WORK/tmp;
    fastcgi_temp_path $WORK/tmp;
    uwsgi_temp_path $WORK/tmp;
    scgi_temp_path $WORK/tmp;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
    }
}
CONF
"$NGINX" -p "$WORK" -c "$WORK/nginx.conf"
URL="http://127.0.0.1:$PORT/1k.html"
wait_port "$PORT"

echo "nginx 1 KB file at $URL; $CONNECTIONS connections, $THREADS threads, ${DURATION}s per run"
echo "wrk:    wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s $URL"
echo "larder: larder bench --url $URL --users $CONNECTIONS --threads $THREADS --duration ${DURATION}s"
RATIOS=()
for pair in $(seq 1 "$PAIRS"); do
    A=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" "$URL" | awk '/^Requests\/sec:/ {print $2}')
    "$LARDER" bench --url "$URL" --users "$CONNECTIONS" --threads "$THREADS" \
        --duration "${DURATION}s" --json "$WORK/b.json" >/dev/null
    B=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit("larder saw errors: %s" % r["errors"]) if r["errors"]["total"] else print("%.2f" % r["throughput_rps"])' "$WORK/b.json")
    R=$(python3 -c "print(f'{$B / $A:.3f}')")
    RATIOS+=("$R")
    printf 'pair %d: wrk %10.1f req/s   larder %10.1f req/s   ratio %s\n' "$pair" "$A" "$B" "$R"
done
MEDIAN=$(printf '%s\n' "${RATIOS[@]}" | python3 -c 'import statistics, sys; print(f"{statistics.median(float(x) for x in sys.stdin):.3f}")')
echo "median ratio larder/wrk: $MEDIAN (required >= $MIN_RATIO)"
python3 -c "import sys; sys.exit(0 if $MEDIAN >= $MIN_RATIO else 1)"
