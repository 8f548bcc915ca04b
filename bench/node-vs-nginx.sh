#!/usr/bin/env bash
# larder node against nginx: the same docroot, one worker each, both on free loopback
# ports, driven by wrk.
#
# 1. Single-file tests on a 6 KB and a 13 KB file (the sizes of the scalable-distribution
#    paper): larder (A) and nginx (B) alternate, A B A B, PAIRS times; prints every run's
#    requests per second and the median ratio larder/nginx.
# 2. Flash's WAN experiment: the 6 KB file with MANY (10,000) keep-alive connections
#    against FEW (100), alternating, on larder (and nginx for context); prints the median
#    ratio many/few.
#
# Settings (environment): PAIRS (3), CONNECTIONS (50), DURATION seconds (8), MANY (10000),
# FEW (100), MANY_DURATION seconds (15), LARDER (path to a release binary; built if unset),
# LARDER_BASELINE (path to another larder binary, e.g. a build of an earlier commit: it
# runs beside the two others in every pair, and the median ratios larder/baseline are
# printed, so a change is judged against its parent in one run), SINGLE_FILE_ONLY (0; 1
# runs part 1 alone).
# Installs nginx and wrk with apt-get when missing. Touches only loopback. The machine may
# be shared: figures are noisy, which is why runs alternate and medians are reported.
set -euo pipefail

PAIRS=${PAIRS:-3}
CONNECTIONS=${CONNECTIONS:-50}
DURATION=${DURATION:-8}
MANY=${MANY:-10000}
FEW=${FEW:-100}
MANY_DURATION=${MANY_DURATION:-15}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

. "$ROOT/bench/lib.sh"
ensure_tools nginx wrk
NGINX=$(tool_path nginx)

LARDER=$(larder_binary "$ROOT")

# 10,000 connections need 10,000 descriptors on each side.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
echo "open-file limit: $(ulimit -n)"

WORK=$(mktemp -d)
LARDER_PID=
BASE_PID=
cleanup() {
    if [ -n "$LARDER_PID" ]; then kill -TERM "$LARDER_PID" 2>/dev/null || true; fi
    if [ -n "$BASE_PID" ]; then kill -TERM "$BASE_PID" 2>/dev/null || true; fi
    if [ -s "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/www" "$WORK/tmp"
head -c 6144 /dev/urandom >"$WORK/www/6k.bin"
head -c 13312 /dev/urandom >"$WORK/www/13k.bin"

LPORT=$(free_port)
"$LARDER" node --docroot "$WORK/www" --listen "127.0.0.1:$LPORT" --max-connections 20000 \
    --idle-timeout-ms 600000 2>"$WORK/larder.log" &
LARDER_PID=$!
if [ -n "${LARDER_BASELINE:-}" ]; then
    BPORT=$(free_port)
    "$LARDER_BASELINE" node --docroot "$WORK/www" --listen "127.0.0.1:$BPORT" \
        --max-connections 20000 --idle-timeout-ms 600000 2>"$WORK/baseline.log" &
    BASE_PID=$!
    wait_port "$BPORT"
    echo "baseline larder node on :$BPORT (pid $BASE_PID, $LARDER_BASELINE)"
fi
NPORT=$(free_port)
cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 20000; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    open_file_cache max=1000 inactive=60s;
    keepalive_requests 100000000;
    keepalive_timeout 600s;
    client_body_temp_path $WORK/tmp;
    proxy_temp_path $WORK/tmp;
    fastcgi_temp_path $WORK/tmp;
    uwsgi_temp_path $WORK/tmp;
    scgi_temp_path $WORK/tmp;
    types { application/octet-stream bin; }
    server {
        listen 127.0.0.1:$NPORT backlog=4096;
        root $WORK/www;
    }
}
CONF
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK"
wait_port "$LPORT"
wait_port "$NPORT"
echo "larder node on :$LPORT (pid $LARDER_PID), nginx on :$NPORT, 1 worker each"

# wrk_rps PORT PATH CONNECTIONS SECONDS -> requests per second
wrk_rps() {
    local out
    out=$(wrk -t1 -c"$3" -d"$4s" --timeout 20s "http://127.0.0.1:$1$2" 2>&1)
    if echo "$out" | grep -q "Socket errors"; then
        echo "$out" | grep "Socket errors" | sed 's/^/    /' >&2
    fi
    echo "$out" | awk '/^Requests\/sec:/ {print $2}'
}

median_ratio() {
    python3 -c 'import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
print("%.3f" % statistics.median([x / y for x, y in zip(a, b)]))' "$1" "$2"
}

for file in 6k.bin 13k.bin; do
    wrk_rps "$LPORT" "/$file" "$CONNECTIONS" 2 >/dev/null
    wrk_rps "$NPORT" "/$file" "$CONNECTIONS" 2 >/dev/null
    A=""
    B=""
    C=""
    for i in $(seq 1 "$PAIRS"); do
        a=$(wrk_rps "$LPORT" "/$file" "$CONNECTIONS" "$DURATION")
        b=$(wrk_rps "$NPORT" "/$file" "$CONNECTIONS" "$DURATION")
        if [ -n "$BASE_PID" ]; then
            c=$(wrk_rps "$BPORT" "/$file" "$CONNECTIONS" "$DURATION")
            echo "$file pair $i: larder $a req/s, nginx $b req/s, baseline $c req/s"
            C="$C $c"
        else
            echo "$file pair $i: larder $a req/s, nginx $b req/s"
        fi
        A="$A $a"
        B="$B $b"
    done
    echo "$file: median larder/nginx = $(median_ratio "$A" "$B") (wrk -t1 -c$CONNECTIONS -d${DURATION}s)"
    if [ -n "$BASE_PID" ]; then
        echo "$file: median larder/baseline = $(median_ratio "$A" "$C")"
    fi
done

if [ "${SINGLE_FILE_ONLY:-0}" = 1 ]; then
    exit 0
fi

NAMES="larder nginx"
[ -n "$BASE_PID" ] && NAMES="larder baseline nginx"
for name in $NAMES; do
    port=$LPORT
    [ "$name" = nginx ] && port=$NPORT
    [ "$name" = baseline ] && port=$BPORT
    M=""
    F=""
    for i in $(seq 1 "$PAIRS"); do
        f=$(wrk_rps "$port" /6k.bin "$FEW" "$DURATION")
        m=$(wrk_rps "$port" /6k.bin "$MANY" "$MANY_DURATION")
        echo "$name 6k.bin pair $i: $FEW connections $f req/s, $MANY connections $m req/s"
        F="$F $f"
        M="$M $m"
    done
    echo "$name: median ($MANY conns)/($FEW conns) = $(median_ratio "$M" "$F")"
done
