#!/usr/bin/env bash
# larder route against HAProxy, with the same thread count, in front of the same back-end
# (nginx, one worker, serving files from a temporary docroot), all on free loopback ports.
#
# 1. Throughput: for each thread count in THREADS (larder `--threads N`, HAProxy
#    `nbthread N`) and each size in SIZES (KB), wrk over keep-alive connections, larder
#    route (A, policy POLICY) and HAProxy (B, `balance uri`, `hash-type consistent`)
#    alternating A B A B, PAIRS times; prints each run's requests per second, p99
#    latency, the CPU time the proxy spent per request and how often it went to sleep per
#    request (voluntary context switches, all its threads, from /proc), the CPU time
#    nginx and wrk spent per request behind it and how much of a core the proxy used,
#    then per size the median ratios larder / HAProxy. Proxy, nginx and wrk share the
#    machine's cores, so a proxy that costs them more per request (more wake-ups) loses
#    throughput even at a lower cost of its own: the "chain" figure is the CPU time all
#    three spent per request, and the ratio HAProxy's chain / larder's is the throughput
#    ratio the cores allow when they are the limit.
# 2. Overhead, as HACC's Figure 3 measured it: the latency of single requests (a fresh
#    connection each, from a small Python client) for sizes from 512 B to 2 MB, sent
#    directly to nginx, through larder route and through HAProxy, interleaved; prints the
#    median and minimum latency per size and the least-squares fits latency = a·KB + b
#    for each path (per-KB and fixed cost) on both, and the per-KB ratio larder/HAProxy.
# 3. Bounded memory: the router's peak RSS before and after relaying one 1 GiB response.
#
# Settings (environment): PAIRS (5), CONNECTIONS (50), DURATION seconds (5), WRK_THREADS
# (1), SIZES ("1 16 256 2048"), THREADS ("1 2"; empty: skip part 1), POLICY (lard),
# SAMPLES per size (40), HAPROXY_SPLICE (1: HAProxy with `option splice-auto`, its own kernel splicing, as larder
# splices; 0: without),
# QUICK (1: PAIRS 5, DURATION 2, SAMPLES 10, for iterating), LARDER (path to a release
# binary; built if unset), ROUTE_TUNING (keys of the router config's [tuning] table, e.g.
# "splice_min_bytes = 0", several separated by ";"), ROUTE_ARGS (more `larder route`
# flags), THROUGHPUT_ONLY (0; 1 runs part 1 alone), LARDER_BASELINE (path to another
# larder binary, e.g. a build of an earlier commit: part 1 then runs it too, in every pair
# beside the two others, and prints the median ratios larder/baseline, so a change is
# judged against its parent in one run on one machine), BASELINE_TUNING and BASELINE_ARGS
# (as ROUTE_TUNING and ROUTE_ARGS, for the baseline: the same binary twice then compares
# two settings; a baseline built before [tuning] takes its old flags, such as
# --splice-min-bytes 0, in BASELINE_ARGS), FLOOR (1: also run
# the relay floor in every pair, HAProxy in `mode tcp` with one server connection per
# client connection, which forwards bytes without reading HTTP at all: the least any
# proxy that sends each request over its own exchange with the back-end can cost here;
# its ratio to HAProxy is the most a proxy of that kind can gain on this machine; 0: off).
# The baseline and the floor are each set against larder and against HAProxy. Installs
# haproxy, nginx and wrk with apt-get when missing. Touches only loopback. The machine may be shared with other
# work: figures are noisy, which is why runs alternate, medians are reported and each
# pair prints the load average.
set -euo pipefail

if [ "${QUICK:-0}" = 1 ]; then
    PAIRS=${PAIRS:-5}
    DURATION=${DURATION:-2}
    SAMPLES=${SAMPLES:-10}
fi
PAIRS=${PAIRS:-5}
CONNECTIONS=${CONNECTIONS:-50}
DURATION=${DURATION:-5}
WRK_THREADS=${WRK_THREADS:-1}
SAMPLES=${SAMPLES:-40}
SIZES=${SIZES:-"1 16 256 2048"}
THREADS=${THREADS-"1 2"}
POLICY=${POLICY:-lard}
ROUTE_ARGS=${ROUTE_ARGS:-}
BASELINE_ARGS=${BASELINE_ARGS:-}
ROUTE_TUNING=${ROUTE_TUNING:-}
BASELINE_TUNING=${BASELINE_TUNING:-}
THROUGHPUT_ONLY=${THROUGHPUT_ONLY:-0}
HAPROXY_SPLICE=${HAPROXY_SPLICE:-1}
FLOOR=${FLOOR:-1}
if [ "$HAPROXY_SPLICE" = 1 ]; then HAPROXY_OPTIONS="option splice-auto"; else HAPROXY_OPTIONS=""; fi
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
NGINX_WORKER=$(pgrep -P "$(cat "$WORK/nginx.pid")" | head -1)

# start_proxies N: larder route (and the baseline, if any) with N threads and HAProxy
# with nbthread N, on fresh ports; sets RPORT/ROUTE_PID, HPORT/HAPROXY_PID, and EXTRAS,
# one "label port pid" per extra proxy (the baseline, the floor).
start_proxies() {
    local BPORT BASE_PID FPORT
    EXTRAS=()
    RPORT=$(free_port)
    # shellcheck disable=SC2086
    "$LARDER" route --listen "127.0.0.1:$RPORT" --node "127.0.0.1:$NPORT" --policy "$POLICY" \
        --threads "$1" --admin "" $(tuning_flags "$WORK/route-tuning.toml" "$ROUTE_TUNING") \
        $ROUTE_ARGS 2>"$WORK/route.log" &
    ROUTE_PID=$!
    PIDS+=("$ROUTE_PID")
    wait_port "$RPORT"
    if [ -n "${LARDER_BASELINE:-}" ]; then
        BPORT=$(free_port)
        # shellcheck disable=SC2086
        "$LARDER_BASELINE" route --listen "127.0.0.1:$BPORT" --node "127.0.0.1:$NPORT" \
            --policy "$POLICY" --threads "$1" --admin "" \
            $(tuning_flags "$WORK/baseline-tuning.toml" "$BASELINE_TUNING") $BASELINE_ARGS \
            2>"$WORK/baseline-route.log" &
        BASE_PID=$!
        PIDS+=("$BASE_PID")
        wait_port "$BPORT"
        EXTRAS+=("baseline $BPORT $BASE_PID")
    fi
    HPORT=$(free_port)
    start_haproxy haproxy "$1" http "$HPORT" "frontend f
    bind 127.0.0.1:$HPORT
    default_backend nodes
backend nodes
    balance uri
    hash-type consistent
    server n1 127.0.0.1:$NPORT"
    HAPROXY_PID=$STARTED_PID
    if [ "$FLOOR" = 1 ]; then
        FPORT=$(free_port)
        start_haproxy floor "$1" tcp "$FPORT" "listen floor
    bind 127.0.0.1:$FPORT
    server n1 127.0.0.1:$NPORT"
        EXTRAS+=("floor $FPORT $STARTED_PID")
    fi
}

# start_haproxy NAME THREADS MODE PORT PROXIES: HAProxy from $WORK/NAME.cfg, the global
# and defaults every HAProxy here shares, in MODE (http: keep-alive; tcp: bytes only),
# then PROXIES, listening on PORT; sets STARTED_PID.
start_haproxy() {
    local name=$1 threads=$2 mode=$3 port=$4 proxies=$5 keep_alive=""
    if [ "$mode" = http ]; then keep_alive="option http-keep-alive"; fi
    cat >"$WORK/$name.cfg" <<CONF
global
    nbthread $threads
    maxconn 4096
defaults
    mode $mode
    $keep_alive
    $HAPROXY_OPTIONS
    timeout connect 5s
    timeout client 60s
    timeout server 60s
$proxies
CONF
    "$HAPROXY" -f "$WORK/$name.cfg" -db >"$WORK/$name.log" 2>&1 &
    STARTED_PID=$!
    PIDS+=("$STARTED_PID")
    wait_port "$port"
}

# extras FIELD: that field of every extra proxy in EXTRAS (2: its port, 3: its pid).
extras() {
    local extra
    for extra in ${EXTRAS[@]+"${EXTRAS[@]}"}; do
        cut -d' ' -f"$1" <<<"$extra"
    done
}

stop_proxies() {
    local p
    for p in "$ROUTE_PID" "$HAPROXY_PID" $(extras 3); do
        kill -TERM "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
}

echo "machine: $(nproc) cores; back-end nginx 127.0.0.1:$NPORT; $("$HAPROXY" -v | head -1)"
echo "larder route --policy $POLICY $ROUTE_ARGS${ROUTE_TUNING:+ [tuning] $ROUTE_TUNING}${LARDER_BASELINE:+; baseline $LARDER_BASELINE}"
echo "haproxy: balance uri, hash-type consistent${HAPROXY_OPTIONS:+, $HAPROXY_OPTIONS}"
if [ "$FLOOR" = 1 ]; then
    echo "floor: haproxy mode tcp (bytes forwarded, no HTTP read), one server connection per client"
fi
echo "wrk -t$WRK_THREADS -c$CONNECTIONS -d${DURATION}s --latency, keep-alive; $PAIRS pairs per size"

# CPU seconds (user + system) a process has used so far, all its threads.
cpu_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"
}

# CPU seconds (user + system) a process has used so far and the part of them spent in
# the kernel (system time), all its threads, from one read.
cpu_and_system_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz, $15 / hz}' "/proc/$1/stat"
}

# Times a process has gone to sleep (voluntary context switches) so far, summed over its
# threads (the process's own status counts only its first thread).
sleeps() {
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {n += $2} END {print n}'
}

# One wrk run for FILE against port $1 whose proxy is process $2: prints
# "req_per_s p99_ms cpu_us_per_request sleeps_per_request nginx_us wrk_us proxy_cores
# system_us_per_request".
# CPU per request is what the proxy itself spent, which the other work on a shared
# machine disturbs far less than throughput; sleeps per request say how often it ran out
# of work and waited; nginx's and wrk's CPU per request what serving and loading through
# it cost the other two; proxy cores its CPU time over the run's wall time; system µs
# per request the part of the proxy's CPU spent in the kernel (its system calls and the
# TCP work they carry, on loopback the receiver's too), which no user-space change of a
# proxy that makes the same system calls can remove.
run_wrk() {
    local out rps p99 requests cpu0 cpu1 cs0 cs1 ngx0 ngx1 wrk_cpu t0 t1 sys0 sys1
    read -r cpu0 sys0 < <(cpu_and_system_seconds "$2")
    cs0=$(sleeps "$2")
    ngx0=$(cpu_seconds "$NGINX_WORKER")
    t0=$(date +%s.%N)
    {
        TIMEFORMAT='%3U %3S'
        time wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
            "http://127.0.0.1:$1/$FILE" >"$WORK/wrk.out"
    } 2>"$WORK/wrk.time"
    t1=$(date +%s.%N)
    out=$(cat "$WORK/wrk.out")
    wrk_cpu=$(awk '{print $1 + $2}' "$WORK/wrk.time")
    ngx1=$(cpu_seconds "$NGINX_WORKER")
    read -r cpu1 sys1 < <(cpu_and_system_seconds "$2")
    cs1=$(sleeps "$2")
    if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
        echo "$out" | grep "Non-2xx\|Socket errors" >&2
        echo "errors during the run on port $1: figures are not comparable" >&2
    fi
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
    requests=$(echo "$out" | awk '/requests in/ {print $1}')
    python3 - "$rps" "$p99" "$requests" "$cpu0" "$cpu1" "$cs0" "$cs1" "$ngx0" "$ngx1" \
        "$wrk_cpu" "$t0" "$t1" "$sys0" "$sys1" <<'PY'
import sys
rps, p99 = float(sys.argv[1]), sys.argv[2]
requests, cpu0, cpu1 = max(float(sys.argv[3]), 1.0), float(sys.argv[4]), float(sys.argv[5])
cs = (float(sys.argv[7]) - float(sys.argv[6])) / requests
ngx_us = (float(sys.argv[9]) - float(sys.argv[8])) * 1e6 / requests
wrk_us = float(sys.argv[10]) * 1e6 / requests
cores = (cpu1 - cpu0) / max(float(sys.argv[12]) - float(sys.argv[11]), 1e-3)
scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
unit = next(u for u in ("us", "ms", "s") if p99.endswith(u))
cpu_us = (cpu1 - cpu0) * 1e6 / requests
sys_us = (float(sys.argv[14]) - float(sys.argv[13])) * 1e6 / requests
print(f"{rps:.0f} {float(p99[:-len(unit)]) * scale[unit]:.3f} {cpu_us:.1f} {cs:.3f} "
      f"{ngx_us:.1f} {wrk_us:.1f} {cores:.2f} {sys_us:.1f}")
PY
}

# median_ratios FILE LABEL: the median over pairs of A/B for requests/s, p99, CPU and
# sleeps per request, and of the chain (proxy + nginx + wrk CPU per request); rows are
# "A B" with each side "rps p99 cpu cs nginx_us wrk_us cores system_us" (see run_wrk).
median_ratios() {
    python3 - "$1" "$2" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
W = 8
def med(f):
    return statistics.median(f(r[:W], r[W:]) for r in rows)
def ratio(i):
    return med(lambda a, b: a[i] / b[i] if b[i] else float("inf"))
def chain(s):
    return s[2] + s[4] + s[5]
per_pair = " ".join(f"{r[0] / r[W]:.3f}" for r in rows)
print(f"  median ratio {sys.argv[2]}: requests/s {ratio(0):.3f} (pairs: {per_pair}), "
      f"p99 {ratio(1):.3f}, CPU/req {ratio(2):.3f}, sleeps/req "
      f"{med(lambda a, b: a[3]):.3f} vs {med(lambda a, b: b[3]):.3f}")
print(f"  per request (medians), A vs B: nginx {med(lambda a, b: a[4]):.1f} vs "
      f"{med(lambda a, b: b[4]):.1f} us, wrk {med(lambda a, b: a[5]):.1f} vs "
      f"{med(lambda a, b: b[5]):.1f} us, chain (proxy + nginx + wrk) "
      f"{med(lambda a, b: chain(a)):.1f} vs {med(lambda a, b: chain(b)):.1f} us; proxy cores "
      f"{med(lambda a, b: a[6]):.2f} vs {med(lambda a, b: b[6]):.2f}; proxy system time "
      f"{med(lambda a, b: a[7]):.1f} vs {med(lambda a, b: b[7]):.1f} us")
print(f"  throughput ratio the cores allow (B chain / A chain): "
      f"{med(lambda a, b: chain(b) / chain(a)):.3f}; with a proxy A costing nothing "
      f"(B chain / A's nginx + wrk): {med(lambda a, b: chain(b) / (a[4] + a[5])):.3f}; "
      f"with A's user-space work costing nothing (B chain / A's system time + nginx + wrk): "
      f"{med(lambda a, b: chain(b) / (a[7] + a[4] + a[5])):.3f}")
PY
}

FILE=1.bin
for threads in $THREADS; do
    start_proxies "$threads"
    echo
    echo "== $threads thread(s): larder route :$RPORT, haproxy nbthread $threads :$HPORT"
    # Warm every path (connections, caches) before measuring.
    for port in "$RPORT" "$HPORT" $(extras 2); do
        wrk -t1 -c"$CONNECTIONS" -d1s "http://127.0.0.1:$port/1.bin" >/dev/null
    done
    for kb in $SIZES; do
        FILE=$kb.bin
        RESULTS="$WORK/pairs-$threads-$kb.txt"
        : >"$RESULTS"
        rm -f "$WORK"/*-pairs-"$threads-$kb".txt "$WORK"/*-vs-haproxy-"$threads-$kb".txt
        for pair in $(seq 1 "$PAIRS"); do
            A=$(run_wrk "$RPORT" "$ROUTE_PID")
            B=$(run_wrk "$HPORT" "$HAPROXY_PID")
            read -r a_rps a_p99 a_cpu a_cs a_ngx a_wrk a_cores a_sys <<<"$A"
            read -r b_rps b_p99 b_cpu b_cs b_ngx b_wrk b_cores b_sys <<<"$B"
            printf "t%s %5s KB pair %d: larder %6s req/s p99 %7s ms %6s us CPU/req (%s system) %s sleeps/req (nginx %s wrk %s us, %s cores) | haproxy %6s req/s p99 %7s ms %6s us CPU/req (%s system) %s sleeps/req (nginx %s wrk %s us, %s cores) (load %s)\n" \
                "$threads" "$kb" "$pair" "$a_rps" "$a_p99" "$a_cpu" "$a_sys" "$a_cs" "$a_ngx" "$a_wrk" "$a_cores" \
                "$b_rps" "$b_p99" "$b_cpu" "$b_sys" "$b_cs" "$b_ngx" "$b_wrk" "$b_cores" "$(cut -d' ' -f1 /proc/loadavg)"
            echo "$A $B" >>"$RESULTS"
            for extra in ${EXTRAS[@]+"${EXTRAS[@]}"}; do
                read -r label port pid <<<"$extra"
                C=$(run_wrk "$port" "$pid")
                read -r c_rps c_p99 c_cpu c_cs c_ngx c_wrk c_cores c_sys <<<"$C"
                printf "t%s %5s KB pair %d: %s %6s req/s p99 %7s ms %6s us CPU/req (%s system) %s sleeps/req (nginx %s wrk %s us, %s cores)\n" \
                    "$threads" "$kb" "$pair" "$label" "$c_rps" "$c_p99" "$c_cpu" "$c_sys" "$c_cs" "$c_ngx" "$c_wrk" "$c_cores"
                echo "$A $C" >>"$WORK/$label-pairs-$threads-$kb.txt"
                echo "$C $B" >>"$WORK/$label-vs-haproxy-$threads-$kb.txt"
            done
        done
        echo "t$threads $kb KB:"
        median_ratios "$RESULTS" "larder/haproxy"
        for extra in ${EXTRAS[@]+"${EXTRAS[@]}"}; do
            read -r label _ _ <<<"$extra"
            median_ratios "$WORK/$label-pairs-$threads-$kb.txt" "larder/$label"
            median_ratios "$WORK/$label-vs-haproxy-$threads-$kb.txt" "$label/haproxy"
        done
    done
    stop_proxies
done
if [ "$THROUGHPUT_ONLY" = 1 ]; then
    exit 0
fi
start_proxies 1

echo
echo "single-request latency: a fresh connection per request, the three paths interleaved"
echo "sample by sample (so background noise hits all three alike); $SAMPLES samples per size"
python3 - "$NPORT" "$RPORT" "$HPORT" "$SAMPLES" $SIZES_KB <<'PY'
import socket, statistics, sys, time
ports = [int(p) for p in sys.argv[1:4]]
samples = int(sys.argv[4])
sizes = sys.argv[5:]
BUF = memoryview(bytearray(1 << 16))

def one(port, name):
    start = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(f"GET /{name}.bin HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
    # Appended to a bytearray (amortised linear): `bytes += chunk` copies all received so
    # far on every read, a client cost that grows with the number of reads, so with how
    # a proxy happens to cut its writes, and that would land in the per-KB fit.
    data = bytearray()
    while True:
        n = s.recv_into(BUF)
        if n == 0:
            break
        data += BUF[:n]
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
    fits = [fit([r[idx][col] for r in rows]) for col in range(3)]
    for (a, b), name in zip(fits, ("direct", "larder route", "haproxy")):
        print(f"  {name:>13}: latency = {a:.5f} ms/KB * KB + {b:.3f} ms")
    (da, db), (la, lb), (ha, hb) = fits
    print(f"  per-KB larder/haproxy {la / ha:.3f}; added over direct: larder {la - da:.5f} "
          f"ms/KB + {lb - db:.3f} ms, haproxy {ha - da:.5f} ms/KB + {hb - db:.3f} ms")
PY

echo
echo "bounded memory: one 1 GiB response through larder route (sparse file, read by nginx)"
truncate -s 1G "$WORK/www/huge.bin"
chmod a+r "$WORK/www/huge.bin"
hwm() { awk '/VmHWM/ {print $2 " " $3}' "/proc/$1/status"; }
echo "  larder route peak RSS before: $(hwm "$ROUTE_PID")"
bytes=$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$RPORT/huge.bin")
echo "  relayed $bytes bytes; peak RSS after: $(hwm "$ROUTE_PID")"
