#!/usr/bin/env bash
# HTTP/2 over TLS through three front-ends in front of the same back-end: larder route
# (--tls-listen, ALPN h2), HAProxy (`ssl crt … alpn h2,http/1.1`, HTTP/1.1 keep-alive to
# the back-end) and nginx (`listen … ssl http2`, proxy_pass to an upstream with
# keepalive), each with THREADS threads (larder --threads, HAProxy nbthread, nginx
# worker_processes). The back-end is one nginx worker serving a 1 KB and a 64 KB file.
#
# For each size in SIZES (KB), h2load (one thread, CLIENTS connections × STREAMS
# concurrent streams each) runs DURATION seconds against each front-end in turn, rounds
# A B C A B C…, ROUNDS times. With REQUESTS set, each run is instead a fixed count of
# requests (`h2load -n REQUESTS`): every front-end then does the same work per run, and
# the requests/s and CPU per request of a pair are steadier on a busy machine than runs
# of a fixed time (whose first and last moments count differently). Prints each run's requests per second and the CPU time the
# front-end spent per request (user + system of all its processes and threads, from
# /proc, over the run, divided by the requests that succeeded), then the medians and the
# median over rounds of the ratios larder / HAProxy and larder / nginx. h2load, the
# back-end and the front-end share the machine's cores: nothing is pinned, and the
# settings are the same for all three front-ends.
#
# The certificate is the router tests' (crates/router/tests/tls). Settings (environment):
# ROUNDS (5), DURATION seconds per run (5), REQUESTS (unset: timed runs), SIZES ("1 64"), CLIENTS (50), STREAMS (10),
# THREADS (1), LARDER (path to a release binary; built if unset), ROUTE_ARGS (more
# `larder route` flags), LARDER_BASELINE (another larder binary, e.g. a build of the
# parent commit: it then runs too, as a fourth front-end in every round, and the median
# ratios larder / baseline are printed), BASELINE_ARGS (its extra flags), NGINX (1; 0
# leaves the nginx front-end out of the rounds). Installs h2load (nghttp2-client), haproxy and nginx with apt-get
# when missing. Touches only loopback.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
SIZES=${SIZES:-"1 64"}
CLIENTS=${CLIENTS:-50}
STREAMS=${STREAMS:-10}
THREADS=${THREADS:-1}
REQUESTS=${REQUESTS:-}
NGINX=${NGINX:-1}
ROUTE_ARGS=${ROUTE_ARGS:-}
BASELINE_ARGS=${BASELINE_ARGS:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
certs="$root/crates/router/tests/tls"
ensure_tools h2load:nghttp2-client haproxy nginx
larder=$(larder_binary "$root")
nginx=$(tool_path nginx)

start_work
# nginx workers drop root: let them read the files and the certificate.
chmod a+rx "$work"
mkdir -p "$work/site" "$work/nginx" "$work/front"
for kb in $SIZES; do
    head -c $((kb * 1024)) /dev/urandom >"$work/site/$kb.bin"
done
cp "$certs/localhost.pem" "$work/cert.pem"
cp "$certs/localhost.key" "$work/key.pem"
cat "$work/cert.pem" "$work/key.pem" >"$work/haproxy.pem"
chmod -R a+rX "$work"

# The back-end.
start_nginx_site "$nginx" 4096 "keepalive_requests 1000000; keepalive_timeout 600s;"
backend="127.0.0.1:$origin_port"

# tls_route BINARY FLAGS: a larder route with a TLS listener in front of the back-end;
# sets $tls_port and $router once it accepts.
tls_route() {
    local binary=$1
    shift
    tls_port=$(free_port)
    # shellcheck disable=SC2068
    start_larder_route "$binary" "$(free_port)" --tls-listen "127.0.0.1:$tls_port" \
        --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" --node "$backend" \
        --threads "$THREADS" $@
    wait_port "$tls_port"
}

# larder route, and the baseline beside it when given.
# shellcheck disable=SC2086
tls_route "$larder" $ROUTE_ARGS
larder_tls=$tls_port
larder_pid=$router
if [ -n "${LARDER_BASELINE:-}" ]; then
    # shellcheck disable=SC2086
    tls_route "$LARDER_BASELINE" $BASELINE_ARGS
    base_tls=$tls_port
    base_pid=$router
fi

# HAProxy.
haproxy_tls=$(free_port)
cat >"$work/haproxy.cfg" <<EOF
global
    nbthread $THREADS
    maxconn 4096
defaults
    mode http
    option http-keep-alive
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend tls
    bind 127.0.0.1:$haproxy_tls ssl crt $work/haproxy.pem alpn h2,http/1.1
    default_backend nodes
backend nodes
    server n1 $backend
EOF
"$(tool_path haproxy)" -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
haproxy_pid=$!
pids+=("$haproxy_pid")
wait_port "$haproxy_tls"

# nginx as a front-end: the common head, with THREADS workers.
nginx_tls=$(free_port)
{
    nginx_conf_head "$work/front" 4096 | sed "s/^worker_processes 1;/worker_processes $THREADS;/"
    cat <<EOF
    upstream nodes {
        server $backend;
        keepalive 128;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$nginx_tls ssl http2;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        http2_max_concurrent_streams 128;
        keepalive_requests 1000000;
        location / {
            proxy_pass http://nodes;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering on;
        }
    }
}
EOF
} >"$work/front/nginx.conf"
"$nginx" -c "$work/front/nginx.conf" -p "$work/front" 2>>"$work/front.err" &
nginx_pid=$!
pids+=("$nginx_pid")
wait_port "$nginx_tls"

# cpu_ticks PID: user + system clock ticks of PID and its child processes still running
# (nginx's workers), all threads.
cpu_ticks() {
    local p total=0
    for p in "$1" $(pgrep -P "$1" || true); do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
    done
    echo "$total"
}
hz=$(getconf CLK_TCK)

# How much each run does: a fixed time, or a fixed count of requests.
if [ -n "$REQUESTS" ]; then
    amount=(-n "$REQUESTS")
else
    amount=(-D "$DURATION")
fi

# run NAME PID PORT KB: one h2load run; appends "NAME KB req/s succeeded cpu_us" to runs.
run() {
    local before after out rps ok failed cpu_us
    before=$(cpu_ticks "$2")
    out=$(h2load -t 1 -c "$CLIENTS" -m "$STREAMS" "${amount[@]}" \
        "https://127.0.0.1:$3/$4.bin" 2>&1)
    after=$(cpu_ticks "$2")
    rps=$(awk '/^finished in/ { print $4 }' <<<"$out")
    ok=$(awk '/^requests:/ { print $8 }' <<<"$out")
    failed=$(awk '/^requests:/ { print $10 + $12 }' <<<"$out")
    # (Requests still open when -D ends count as neither done nor failed.)
    if [ "${failed:-1}" != 0 ]; then
        grep -E "^(requests|status codes):" <<<"$out" >&2 || echo "$out" >&2
        echo "$1 $4 KB: failed requests, figures are not comparable" >&2
    fi
    cpu_us=$(((after - before) * 1000000 / hz))
    awk -v n="$1" -v kb="$4" -v rps="$rps" -v ok="$ok" -v us="$cpu_us" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
        'BEGIN { printf "%-8s %3s KB: %9.0f req/s %8.2f us CPU/req (load %s)\n", n, kb, rps, us / (ok > 0 ? ok : 1), load }'
    echo "$1 $4 $rps $ok $cpu_us" >>"$work/runs"
}

echo "machine: $(nproc) cores; back-end nginx (1 worker) $backend; $("$(tool_path haproxy)" -v | head -1); $("$nginx" -v 2>&1)"
echo "front-ends with $THREADS thread(s) each: larder route --threads $THREADS $ROUTE_ARGS, haproxy nbthread $THREADS, nginx worker_processes $THREADS; TLS with the same certificate"
if [ -n "${LARDER_BASELINE:-}" ]; then echo "baseline: $LARDER_BASELINE route --threads $THREADS $BASELINE_ARGS"; fi
echo "h2load -t 1 -c $CLIENTS -m $STREAMS ${amount[*]}, over TLS (ALPN h2); nothing pinned; $ROUNDS rounds A B C per size"
# Warm every path (TLS sessions aside, connections to the back-end).
for port in "$larder_tls" "$haproxy_tls" "$nginx_tls" ${base_tls:-}; do
    h2load -t 1 -c "$CLIENTS" -m "$STREAMS" -D 1 "https://127.0.0.1:$port/1.bin" >/dev/null 2>&1 || true
done
for kb in $SIZES; do
    for round in $(seq 1 "$ROUNDS"); do
        echo "-- $kb KB round $round"
        run larder "$larder_pid" "$larder_tls" "$kb"
        run haproxy "$haproxy_pid" "$haproxy_tls" "$kb"
        if [ "$NGINX" = 1 ]; then run nginx "$nginx_pid" "$nginx_tls" "$kb"; fi
        if [ -n "${LARDER_BASELINE:-}" ]; then run baseline "$base_pid" "$base_tls" "$kb"; fi
    done
done
python3 - "$work/runs" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, kb, rps, ok, cpu_us = line.split()
    runs.setdefault((name, kb), []).append((float(rps), float(cpu_us) / max(int(ok), 1)))
sizes = sorted({kb for _, kb in runs}, key=float)
print(f"{'KB':>4} {'front-end':<9} {'req/s':>9} {'CPU µs/req':>11}   (medians)")
for kb in sizes:
    for name in ("larder", "haproxy", "nginx", "baseline"):
        if (name, kb) not in runs:
            continue
        r = runs[(name, kb)]
        print(f"{kb:>4} {name:<9} {statistics.median(x for x, _ in r):>9.0f} "
              f"{statistics.median(c for _, c in r):>11.2f}")
for kb in sizes:
    for other in ("haproxy", "nginx", "baseline"):
        if (other, kb) not in runs:
            continue
        pairs = list(zip(runs[("larder", kb)], runs[(other, kb)]))
        rps = statistics.median(a[0] / b[0] for a, b in pairs)
        cpu = statistics.median(a[1] / b[1] for a, b in pairs)
        each = " ".join(f"{a[0] / b[0]:.3f}" for a, b in pairs)
        print(f"{kb} KB larder/{other}: requests/s {rps:.3f} (rounds: {each}), CPU/req {cpu:.3f}")
EOF
