#!/usr/bin/env bash
# larder route against HAProxy, both on one thread, in front of the same back-end (nginx,
# one worker, serving files from a temporary docroot), all on free loopback ports.
#
# 1. Throughput: wrk over keep-alive connections for a 1 KB file, larder route (A) and
#    HAProxy (B, `balance uri`, `hash-type consistent`, `nbthread 1`) alternating A B A B,
#    PAIRS times; prints each run's requests per second and p99 latency, then the median
#    ratio of requests per second (larder / HAProxy), of p99 latency, and of the CPU time
#    each proxy spent per request (from /proc; the steadiest figure on a busy machine).
# 2. Overhead, as HACC's Figure 3 measured it: the latency of single requests (a fresh
#    connection each, from a small Python client) for sizes from 512 B to 2 MB, sent
#    directly to nginx, through larder route and through HAProxy, interleaved; prints the
#    median and minimum latency per size and the least-squares fits latency = a·KB + b
#    for each path (per-KB and fixed cost) on both.
# 3. Bounded memory: the router's peak RSS before and after relaying one 1 GiB response.
#
# Settings (environment): PAIRS (3), CONNECTIONS (50), DURATION seconds (8), WRK_THREADS
# (1), SAMPLES per size (40), LARDER (path to a release binary; built if unset),
# THROUGHPUT_ONLY (0; 1 runs part 1 alone, for quick comparisons), LARDER_BASELINE (path to
# another larder binary, e.g. a build of an earlier commit: part 1 then runs it too, in
# every pair beside the two others, and prints the median ratios larder/baseline, so a
# change is judged against its parent in one run on one machine). Installs
# haproxy, nginx and wrk with apt-get when missing. Touches only loopback. The machine
# may be shared with other work: figures are noisy, which is why runs alternate and
# medians are reported.
set -euo pipefail

PAIRS=${PAIRS:-3}
CONNECTIONS=${CONNECTIONS:-50}
DURATION=${DURATION:-8}
WRK_THREADS=${WRK_THREADS:-1}
SAMPLES=${SAMPLES:-40}
THROUGHPUT_ONLY=${THROUGHPUT_ONLY:-0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

. "$ROOT/bench/lib.sh"
ensure_tools haproxy nginx wrk curl
HAPROXY=$(tool_path haproxy)
NGINX=$(tool_path nginx)

LARDER=$(larder_binary "$ROOT")

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    if [ -s "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# The documents: 1 KB for throughput, 512 B … 2 MB for the overhead fit.
SIZES_KB="0.5 1 2 4 8 16 32 64 128 256 512 1024 2048"
mkdir -p "$WORK/www" "$WORK/tmp"
for kb in $SIZES_KB; do
    head -c "$(python3 -c "print(int($kb * 1024))")" /dev/urandom >"$WORK/www/$kb.bin"
done
# nginx workers drop root: let them read the docroot.
chmod -R a+rX "$WORK"

NPORT=$(free_port)
cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 20000; }
http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 600s;
    client_body_temp_path $WORK/tmp;
    proxy_temp_path $WORK/tmp;
    fastcgi_temp_path $WORK/tmp;
    uwsgi_temp_path $WORK/tmp;
    scgi_temp_path $WORK/tmp;
    server {
        listen 127.0.0.1:$NPORT;
        root $WORK/www;
    }
}
CONF
"$NGINX" -c "$WORK/nginx.conf"
wait_port "$NPORT"

RPORT=$(free_port)
"$LARDER" route --listen "127.0.0.1:$RPORT" --node "127.0.0.1:$NPORT" --policy hash \
    --threads 1 --admin "" 2>"$WORK/route.log" &
ROUTE_PID=$!
PIDS+=("$ROUTE_PID")
wait_port "$RPORT"

if [ -n "${LARDER_BASELINE:-}" ]; then
    BPORT=$(free_port)
    "$LARDER_BASELINE" route --listen "127.0.0.1:$BPORT" --node "127.0.0.1:$NPORT" \
        --policy hash --threads 1 --admin "" 2>"$WORK/baseline-route.log" &
    BASE_PID=$!
    PIDS+=("$BASE_PID")
    wait_port "$BPORT"
    echo "baseline larder route :$BPORT ($LARDER_BASELINE)"
fi

HPORT=$(free_port)
cat >"$WORK/haproxy.cfg" <<CONF
global
    nbthread 1
    maxconn 4096
defaults
    mode http
    option http-keep-alive
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend f
    bind 127.0.0.1:$HPORT
    default_backend nodes
backend nodes
    balance uri
    hash-type consistent
    server n1 127.0.0.1:$NPORT
CONF
"$HAPROXY" -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.log" 2>&1 &
HAPROXY_PID=$!
PIDS+=("$HAPROXY_PID")
wait_port "$HPORT"

echo "machine: $(nproc) cores; back-end nginx 127.0.0.1:$NPORT; larder route :$RPORT; haproxy :$HPORT ($("$HAPROXY" -v | head -1))"
echo "wrk -t$WRK_THREADS -c$CONNECTIONS -d${DURATION}s --latency, 1 KB file, keep-alive"

# CPU seconds (user + system) a process has used so far.
cpu_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"
}

# Times a process has gone to sleep (voluntary context switches) so far.
sleeps() {
    awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$1/status"
}

# One wrk run against port $1 whose proxy is process $2: prints
# "req_per_s p99_ms cpu_us_per_request sleeps_per_request". CPU per request is what the
# proxy itself spent, which the other work on a shared machine disturbs far less than
# throughput; sleeps per request say how often it ran out of work and waited.
run_wrk() {
    local out rps p99 requests cpu0 cpu1 cs0 cs1
    cpu0=$(cpu_seconds "$2")
    cs0=$(sleeps "$2")
    out=$(wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "http://127.0.0.1:$1/1.bin")
    cpu1=$(cpu_seconds "$2")
    cs1=$(sleeps "$2")
    if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
        echo "$out" | grep "Non-2xx\|Socket errors" >&2
        echo "errors during the run on port $1: figures are not comparable" >&2
    fi
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
    requests=$(echo "$out" | awk '/requests in/ {print $1}')
    python3 - "$rps" "$p99" "$requests" "$cpu0" "$cpu1" "$cs0" "$cs1" <<'PY'
import sys
rps, p99 = float(sys.argv[1]), sys.argv[2]
requests, cpu0, cpu1 = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
cs = (float(sys.argv[7]) - float(sys.argv[6])) / max(requests, 1.0)
scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
unit = next(u for u in ("us", "ms", "s") if p99.endswith(u))
cpu_us = (cpu1 - cpu0) * 1e6 / max(requests, 1.0)
print(f"{rps:.0f} {float(p99[:-len(unit)]) * scale[unit]:.3f} {cpu_us:.1f} {cs:.3f}")
PY
}

# Warm both paths (connections, caches) before measuring.
wrk -t1 -c"$CONNECTIONS" -d2s "http://127.0.0.1:$RPORT/1.bin" >/dev/null
wrk -t1 -c"$CONNECTIONS" -d2s "http://127.0.0.1:$HPORT/1.bin" >/dev/null
if [ -n "${LARDER_BASELINE:-}" ]; then
    wrk -t1 -c"$CONNECTIONS" -d2s "http://127.0.0.1:$BPORT/1.bin" >/dev/null
fi

RESULTS="$WORK/pairs.txt"
BASELINE_RESULTS="$WORK/baseline-pairs.txt"
: >"$RESULTS"
: >"$BASELINE_RESULTS"
for pair in $(seq 1 "$PAIRS"); do
    read -r a_rps a_p99 a_cpu a_cs < <(run_wrk "$RPORT" "$ROUTE_PID")
    read -r b_rps b_p99 b_cpu b_cs < <(run_wrk "$HPORT" "$HAPROXY_PID")
    printf "pair %d: larder route %6s req/s p99 %8s ms %5s us CPU/req %s sleeps/req | haproxy %6s req/s p99 %8s ms %5s us CPU/req %s sleeps/req (load %s)\n" \
        "$pair" "$a_rps" "$a_p99" "$a_cpu" "$a_cs" "$b_rps" "$b_p99" "$b_cpu" "$b_cs" "$(cut -d' ' -f1 /proc/loadavg)"
    echo "$a_rps $a_p99 $a_cpu $b_rps $b_p99 $b_cpu" >>"$RESULTS"
    if [ -n "${LARDER_BASELINE:-}" ]; then
        read -r c_rps c_p99 c_cpu c_cs < <(run_wrk "$BPORT" "$BASE_PID")
        printf "pair %d: baseline     %6s req/s p99 %8s ms %5s us CPU/req %s sleeps/req\n" \
            "$pair" "$c_rps" "$c_p99" "$c_cpu" "$c_cs"
        echo "$a_rps $a_p99 $a_cpu $c_rps $c_p99 $c_cpu" >>"$BASELINE_RESULTS"
    fi
done
if [ -n "${LARDER_BASELINE:-}" ]; then
    python3 - "$BASELINE_RESULTS" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
ratios = [r[0] / r[3] for r in rows]
print("larder/baseline requests/s per pair: " + " ".join(f"{x:.3f}" for x in ratios))
print(f"median ratio larder/baseline: requests/s {statistics.median(ratios):.3f}, "
      f"p99 latency {statistics.median(r[1] / r[4] for r in rows):.3f}, "
      f"CPU per request {statistics.median(r[2] / r[5] for r in rows):.3f}")
PY
fi
python3 - "$RESULTS" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
rps = statistics.median(r[0] / r[3] for r in rows)
p99 = statistics.median(r[1] / r[4] for r in rows)
cpu = statistics.median(r[2] / r[5] for r in rows)
print(f"median ratio larder/haproxy: requests/s {rps:.3f}, p99 latency {p99:.3f}, CPU per request {cpu:.3f}")
print(f"verdict: throughput {'>=' if rps >= 1.0 else '<'} 1.0x, p99 {'no higher' if p99 <= 1.0 else 'higher'}")
PY
if [ "$THROUGHPUT_ONLY" = 1 ]; then
    exit 0
fi

echo
echo "single-request latency: a fresh connection per request, the three paths interleaved"
echo "sample by sample (so background noise hits all three alike); $SAMPLES samples per size"
python3 - "$NPORT" "$RPORT" "$HPORT" "$SAMPLES" $SIZES_KB <<'PY'
import socket, statistics, sys, time
ports = [int(p) for p in sys.argv[1:4]]
samples = int(sys.argv[4])
sizes = sys.argv[5:]

def one(port, name):
    start = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(f"GET /{name}.bin HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    s.close()
    elapsed = (time.perf_counter() - start) * 1000
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:80]
    assert len(body) == int(float(name) * 1024), (name, len(body))
    return elapsed

rows = []
print(f"{'KB':>8} {'direct ms':>12} {'larder ms':>12} {'haproxy ms':>12}   (median; min in brackets)")
for name in sizes:
    times = [[], [], []]
    for _ in range(samples):
        for i, port in enumerate(ports):
            times[i].append(one(port, name))
    med = [statistics.median(t) for t in times]
    low = [min(t) for t in times]
    rows.append((float(name), med, low))
    print(f"{name:>8} " + " ".join(f"{m:7.3f} [{l:5.3f}]" for m, l in zip(med, low)))

kb = [r[0] for r in rows]
def fit(ys):
    n = len(kb); mx = sum(kb) / n; my = sum(ys) / n
    a = sum((x - mx) * (y - my) for x, y in zip(kb, ys)) / sum((x - mx) ** 2 for x in kb)
    return a, my - a * mx
for label, idx in (("medians", 1), ("minimums", 2)):
    print(f"fit on {label}:")
    for col, name in enumerate(("direct", "larder route", "haproxy")):
        a, b = fit([r[idx][col] for r in rows])
        print(f"  {name:>13}: latency = {a:.5f} ms/KB * KB + {b:.3f} ms")
PY

echo
echo "bounded memory: one 1 GiB response through larder route (sparse file, read by nginx)"
truncate -s 1G "$WORK/www/huge.bin"
chmod a+r "$WORK/www/huge.bin"
hwm() { awk '/VmHWM/ {print $2 " " $3}' "/proc/$1/status"; }
echo "  larder route peak RSS before: $(hwm "$ROUTE_PID")"
bytes=$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$RPORT/huge.bin")
echo "  relayed $bytes bytes; peak RSS after: $(hwm "$ROUTE_PID")"
