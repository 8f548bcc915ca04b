#!/usr/bin/env bash
# The scalable content-aware distribution paper's scaling figure on one machine: cluster
# throughput as back-end nodes grow, with the front-end held to a fixed CPU budget,
# `larder route` relaying every response against `larder route --handoff` passing each
# connection to the node of its first request (over the node's Unix socket).
#
# Every node is capped at NODE_SHARE of a core and the router at ROUTER_SHARE (a cgroup
# each, as `larder bench experiment --node-cpu-share` caps nodes: cgroup v2 `cpu.max` where
# its cpu controller is available, else v1's `cpu.cfs_quota_us`; needs root), so that the
# nodes and the load generator fit the machine's cores and each node behaves as a machine
# of its own. One page of each size in SIZES_KB, cached by the nodes, is fetched by wrk
# over CONNECTIONS keep-alive connections; the router places first requests with POLICY
# (wrr: a single target under a locality-aware policy stays on one node). For each size,
# ROUNDS times each node count in NODE_COUNTS, relay then handoff (A B A B), it prints
# req/s, the router's CPU time per request (its threads' run time, from
# /proc/PID/task/*/schedstat), the share of a core the nodes and wrk used, the periods in
# which the router was throttled, and the handoffs and fallbacks the router counted; then
# per size the median req/s per node count, the ratio of the largest node count to the
# smallest, and the median ratio of the router's CPU per request handoff / relay.
#
# With TRACE (an access log, e.g. ../shared/traces/epa_aug95.log.gz) the workload is that
# trace instead of one page: `larder trace docroot` writes each of its targets as a file
# of its recorded size, the nodes serve them, and `larder bench --trace --flat
# --docroot-urls` replays the trace's requests in order over CONNECTIONS keep-alive
# connections (from the start again when it ends), in place of wrk; SIZES_KB is ignored.
# A target the docroot cannot hold (a path that is both a file and a directory) is
# answered 404, the same in every mode; the 4xx column counts them, and any other error
# stops the run.
#
# Settings (environment): LARDER (release binary; built if unset), SIZES_KB ("13 6"),
# NODE_COUNTS ("1 2 3 4"), ROUTER_SHARE (0.1), NODE_SHARE (0.2), POLICY (wrr),
# CONNECTIONS (50), WRK_THREADS (1), DURATION seconds (8), ROUNDS (2), ROUTER_THREADS (1),
# CLIENT_CLOSE (0; 1: every request asks `Connection: close`, so each connection carries
# one request and the router places, and with --handoff passes, every one, as with the
# paper's HTTP/1.0 clients), RUN_WEIGHT (32: the run's processes, wrk included, weigh against other work on the machine
# as that many ordinary processes do (cgroup cpu.shares / cpu.weight), so that the caps,
# not a compile beside the run, limit each of them; 1 weighs them as one process).
# Installs wrk and curl with apt-get when missing. Touches only loopback. Every process
# and cgroup it makes is removed on exit, on Ctrl-C and on failure.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

SIZES_KB=${SIZES_KB:-"13 6"}
NODE_COUNTS=${NODE_COUNTS:-"1 2 3 4"}
ROUTER_SHARE=${ROUTER_SHARE:-0.1}
NODE_SHARE=${NODE_SHARE:-0.2}
POLICY=${POLICY:-wrr}
CONNECTIONS=${CONNECTIONS:-50}
WRK_THREADS=${WRK_THREADS:-1}
DURATION=${DURATION:-8}
ROUNDS=${ROUNDS:-2}
ROUTER_THREADS=${ROUTER_THREADS:-1}
CLIENT_CLOSE=${CLIENT_CLOSE:-0}
RUN_WEIGHT=${RUN_WEIGHT:-32}
TRACE=${TRACE:-}

if [ "$(id -u)" != 0 ]; then
    echo "handoff-scaling.sh caps CPU time with cgroups: run it as root" >&2
    exit 2
fi
ensure_tools wrk curl
LARDER=$(larder_binary "$ROOT")

work=$(mktemp -d)
pids=()
CGROUP=
cleanup() {
    stop_pids
    if [ -n "$CGROUP" ] && [ -d "$CGROUP" ]; then
        local d tries
        for d in "$CGROUP"/*/ "$CGROUP"; do
            [ -d "$d" ] || continue
            # The kernel may still count a process that just exited.
            for tries in $(seq 1 50); do rmdir "$d" 2>/dev/null && break; sleep 0.1; done
            [ -d "$d" ] && echo "could not remove the cgroup $d" >&2
        done
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# cgroup_parent: "VERSION DIR", this process's cgroup in a hierarchy that can cap CPU
# time: cgroup v2 when it offers the cpu controller, else v1's cpu hierarchy.
cgroup_parent() {
    local own mount
    own=$(sed -n 's/^0:://p' /proc/self/cgroup)
    mount=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
    if [ -n "$mount" ] && [ -n "$own" ] && grep -qw cpu "$mount$own/cgroup.controllers" 2>/dev/null; then
        echo "2 $mount${own%/}"
        return
    fi
    own=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3; exit }' /proc/self/cgroup)
    mount=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)cpu(,|$)/ { print $5; exit }' /proc/self/mountinfo)
    if [ -n "$mount" ] && [ -f "$mount${own%/}/cpu.cfs_quota_us" ]; then
        echo "1 $mount${own%/}"
        return
    fi
    echo "no cgroup hierarchy with CPU bandwidth control (cgroup v2's cpu controller or v1's cpu.cfs_quota_us)" >&2
    return 1
}
CG=$(cgroup_parent)
read -r CG_VERSION CG_PARENT <<<"$CG"
if [ "$CG_VERSION" = 2 ] && ! grep -qw cpu "$CG_PARENT/cgroup.subtree_control"; then
    echo +cpu >"$CG_PARENT/cgroup.subtree_control"
fi
# Runs killed outright leave their cgroups: remove those whose script is gone.
for stale in "$CG_PARENT"/larder-bench-*; do
    [ -d "$stale" ] && [ ! -d "/proc/${stale##*-}" ] || continue
    for d in "$stale"/*/ "$stale"; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
done
CGROUP="$CG_PARENT/larder-bench-$$"
mkdir "$CGROUP"
if [ "$CG_VERSION" = 2 ]; then
    echo +cpu >"$CGROUP/cgroup.subtree_control"
    echo $((100 * RUN_WEIGHT)) >"$CGROUP/cpu.weight"
else
    echo $((1024 * RUN_WEIGHT)) >"$CGROUP/cpu.shares"
fi

# bandwidth SHARE: "QUOTA PERIOD" in µs, as the lab sets them: a 10 ms period, longer
# where the quota would fall below the kernel's least (1 ms).
bandwidth() {
    awk -v s="$1" 'BEGIN {
        p = 10000; need = int(1000 / s + 0.999999); if (need > p) p = need; if (p > 1000000) p = 1000000
        q = int(s * p + 0.5); if (q < 1000) q = 1000; print q, p }'
}

# For `sh -c "$ENTER" sh DIR CMD...`: the shell moves itself into the cgroup DIR, then
# becomes CMD.
ENTER='echo $$ >"$1/cgroup.procs" && shift && exec "$@"'

# in_cgroup NAME CMD...: CMD in the run's cgroup NAME (made if missing, uncapped).
in_cgroup() {
    local dir="$CGROUP/$1"
    shift
    mkdir -p "$dir"
    sh -c "$ENTER" sh "$dir" "$@"
}

# capped NAME SHARE CMD...: CMD in the background in a cgroup of its own capped at SHARE
# of a core; its pid goes to $pids and $capped_pid.
capped() {
    local name=$1 share=$2 dir quota period
    shift 2
    dir="$CGROUP/$name"
    mkdir -p "$dir"
    read -r quota period < <(bandwidth "$share")
    if [ "$CG_VERSION" = 2 ]; then
        echo "$quota $period" >"$dir/cpu.max"
    else
        echo "$period" >"$dir/cpu.cfs_period_us"
        echo "$quota" >"$dir/cpu.cfs_quota_us"
    fi
    # Started directly (not through a function, which would fork a shell of its own):
    # $! is then the process itself, to signal and to measure.
    sh -c "$ENTER" sh "$dir" "$@" &
    capped_pid=$!
    pids+=("$capped_pid")
}

# throttled NAME: periods in which the cgroup NAME was throttled so far.
throttled() {
    awk '$1 == "nr_throttled" { print $2 }' "$CGROUP/$1/cpu.stat"
}

# stat_field JSON_PATH: a number from the router's /stats.
router_stat() {
    curl -s --max-time 5 "http://127.0.0.1:$ADMIN_PORT/stats" |
        /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["handoff"][sys.argv[1]])' "$1"
}

mkdir -p "$work/www"
if [ -n "$TRACE" ]; then
    [ -r "$TRACE" ] || { echo "cannot read the trace $TRACE" >&2; exit 2; }
    "$LARDER" trace docroot "$TRACE" "$work/www" >&2
    SIZES_KB=trace
else
    for kb in $SIZES_KB; do
        head -c "$((kb * 1024))" /dev/urandom >"$work/www/page-$kb.bin"
    done
fi
# What the handoff wait below asks for: a small file of no workload.
head -c 1024 /dev/urandom >"$work/www/larder-probe.bin"

# start_cluster N MODE: N capped nodes and a capped router (MODE relay or handoff) on free
# loopback ports; sets $PORT, $ADMIN_PORT, $ROUTER_PID and $NODE_PIDS.
start_cluster() {
    local n=$1 mode=$2 i port nodes=() args=()
    NODE_PIDS=()
    for i in $(seq 1 "$n"); do
        port=$(free_port)
        capped "node$i" "$NODE_SHARE" "$LARDER" node --listen "127.0.0.1:$port" \
            --docroot "$work/www" --threads 1 --handoff-socket "$work/n$i.sock" \
            2>>"$work/node.err"
        NODE_PIDS+=("$capped_pid")
        wait_port "$port"
        nodes+=(--node "127.0.0.1:$port")
    done
    PORT=$(free_port)
    ADMIN_PORT=$(free_port)
    [ "$mode" = handoff ] && args+=(--handoff)
    capped router "$ROUTER_SHARE" "$LARDER" route --listen "127.0.0.1:$PORT" \
        --admin "127.0.0.1:$ADMIN_PORT" --policy "$POLICY" --threads "$ROUTER_THREADS" \
        "${nodes[@]}" "${args[@]}" 2>>"$work/route.err"
    ROUTER_PID=$capped_pid
    wait_port "$PORT"
    wait_port "$ADMIN_PORT"
    if [ "$mode" = handoff ]; then
        # Until the router has every node's socket from its load report (one poll),
        # a connection may be relayed for its whole life: wait for N in a row handed.
        local before tries
        for tries in $(seq 1 100); do
            before=$(router_stat handoffs)
            for i in $(seq 1 "$n"); do curl -s -o /dev/null "http://127.0.0.1:$PORT/larder-probe.bin" || true; done
            [ "$(router_stat handoffs)" -ge $((before + n)) ] && return 0
            sleep 0.1
        done
        echo "the router did not hand off to all $n nodes within 10 s" >&2
        exit 1
    fi
}

# load SECONDS: the workload for SECONDS against the cluster at $PORT, in the cgroup `wrk`:
# wrk on page-$kb.bin, or with TRACE the trace replayed by `larder bench`; ends with the
# line "load: REQ_PER_S REQUESTS 4XX", or stops the run on an error.
load() {
    local seconds=$1 out
    if [ -n "$TRACE" ]; then
        local args=(--url "http://127.0.0.1:$PORT/" --trace "$TRACE" --flat --docroot-urls
            --users "$CONNECTIONS" --threads "$WRK_THREADS" --duration "${seconds}s"
            --json "$work/bench.json")
        [ "$CLIENT_CLOSE" = 1 ] && args+=(--connection-per-request)
        in_cgroup wrk "$LARDER" bench "${args[@]}" >"$work/bench.out" 2>&1 || {
            cat "$work/bench.out" >&2
            exit 1
        }
        /usr/bin/python3 - "$work/bench.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["errors"]
if e["total"] != e["status_4xx"]:
    sys.exit(f"larder bench saw errors: {e}")
print("load:", r["throughput_rps"], r["requests"], e["status_4xx"])
PY
        return
    fi
    local wrk_args=(-t"$WRK_THREADS" -c"$CONNECTIONS")
    [ "$CLIENT_CLOSE" = 1 ] && wrk_args+=(-H "Connection: close")
    out=$(in_cgroup wrk wrk "${wrk_args[@]}" -d"${seconds}s" "http://127.0.0.1:$PORT/page-$kb.bin")
    if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
        echo "wrk saw errors:" >&2
        echo "$out" >&2
        exit 1
    fi
    echo "load: $(echo "$out" | awk '/^Requests\/sec:/ { print $2 }') $(echo "$out" | awk '/requests in/ { print $1 }') 0"
}

# measure SIZE N MODE: one run; prints a row and appends "SIZE N MODE RPS NS_PER_REQ" to
# $work/runs.
measure() {
    local kb=$1 n=$2 mode=$3 pid url out rps requests r0 r1 t0 t1 h0 h1 f0 f1 nodes0=0 nodes1=0
    local w0 w1 wall0 wall1 not_found
    start_cluster "$n" "$mode"
    # Warm-up: the page read and cached by every node, connections pooled.
    load 1 >/dev/null
    r0=$(run_ns "$ROUTER_PID")
    for pid in "${NODE_PIDS[@]}"; do nodes0=$((nodes0 + $(run_ns "$pid"))); done
    t0=$(throttled router)
    h0=$(router_stat handoffs)
    f0=$(router_stat fallbacks)
    wall0=$(date +%s%N)
    out=$( (load "$DURATION"; times) 2>&1)
    wall1=$(date +%s%N)
    r1=$(run_ns "$ROUTER_PID")
    for pid in "${NODE_PIDS[@]}"; do nodes1=$((nodes1 + $(run_ns "$pid"))); done
    t1=$(throttled router)
    h1=$(router_stat handoffs)
    f1=$(router_stat fallbacks)
    stop_pids
    read -r rps requests not_found < <(echo "$out" | grep '^load:' | cut -d' ' -f2-)
    # wrk's own CPU time: the last line of `times` is its children's user and system time.
    w1=$(echo "$out" | tail -1 | awk '{
        t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] } print t }')
    /usr/bin/python3 - "$kb" "$n" "$mode" "$rps" "$requests" "$r0" "$r1" "$nodes0" "$nodes1" \
        "$wall0" "$wall1" "$w1" "$t0" "$t1" "$h0" "$h1" "$f0" "$f1" "$(cut -d' ' -f1 /proc/loadavg)" \
        "$work/runs" "$not_found" <<'PY'
import sys
(kb, n, mode, rps, reqs, r0, r1, n0, n1, w0, w1, wrk, t0, t1, h0, h1, f0, f1, load, runs, nf) = sys.argv[1:]
rps, reqs = float(rps), int(reqs)
wall = (int(w1) - int(w0)) / 1e9
router_ns = (int(r1) - int(r0)) / reqs
label = f"{kb} KB" if kb.isdigit() else kb
print(f"| {label} | {n} | {mode} | {rps:,.0f} | {router_ns / 1000:.2f} | "
      f"{(int(r1) - int(r0)) / 1e9 / wall:.3f} | {(int(n1) - int(n0)) / 1e9 / wall:.2f} | "
      f"{float(wrk) / wall:.2f} | {int(t1) - int(t0)} | {int(h1) - int(h0)} | {int(f1) - int(f0)} | {nf} | {load} |",
      flush=True)
with open(runs, "a") as f:
    f.write(f"{kb} {n} {mode} {rps} {router_ns}\n")
PY
}

quota_router=$(bandwidth "$ROUTER_SHARE")
quota_node=$(bandwidth "$NODE_SHARE")
echo "Router capped at $ROUTER_SHARE of a core (cgroup v$CG_VERSION, quota/period µs: $quota_router), each node at $NODE_SHARE ($quota_node);"
connections="keep-alive connections"
[ "$CLIENT_CLOSE" = 1 ] && connections="a connection per request (Connection: close)"
generator="wrk -t$WRK_THREADS -c$CONNECTIONS -d${DURATION}s"
[ -n "$TRACE" ] &&
    generator="larder bench --trace $(basename "$TRACE") --flat --threads $WRK_THREADS --users $CONNECTIONS --duration ${DURATION}s"
echo "run weight $RUN_WEIGHT, policy $POLICY, router threads $ROUTER_THREADS, $generator over $connections, $ROUNDS rounds relay/handoff alternating."
echo
echo "| page | nodes | mode | req/s | router µs CPU/req | router cores | nodes' cores | load generator cores | router throttled periods | handoffs | fallbacks | 4xx | load avg |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
: >"$work/runs"
# Rounds outermost: every node count is measured once per round, so a change in the
# machine's other work during the run shifts every count alike, not the last ones only.
for kb in $SIZES_KB; do
    for _ in $(seq 1 "$ROUNDS"); do
        for n in $NODE_COUNTS; do
            measure "$kb" "$n" relay
            measure "$kb" "$n" handoff
        done
    done
done

echo
/usr/bin/python3 - "$work/runs" "$NODE_COUNTS" <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    kb, n, mode, rps, ns = line.split()
    runs[(kb, int(n), mode)].append((float(rps), float(ns)))
counts = [int(c) for c in sys.argv[2].split()]
lo, hi = min(counts), max(counts)
print("Medians: req/s per node count, the scaling ratio and the router's CPU per request")
print()
print("| page | mode | " + " | ".join(f"{c} node{'s' if c > 1 else ''}" for c in counts)
      + f" | {hi}/{lo} | router µs CPU/req at {hi} |")
print("|---|---|" + "---:|" * (len(counts) + 2))
sizes = list(dict.fromkeys(k[0] for k in runs))
per_req = {}
for kb in sizes:
    for mode in ("relay", "handoff"):
        rps = {c: statistics.median(r for r, _ in runs[(kb, c, mode)]) for c in counts}
        ns = {c: statistics.median(x for _, x in runs[(kb, c, mode)]) for c in counts}
        per_req[(kb, mode)] = ns
        label = f"{kb} KB" if kb.isdigit() else kb
        print(f"| {label} | {mode} | " + " | ".join(f"{rps[c]:,.0f}" for c in counts)
              + f" | {rps[hi] / rps[lo]:.2f}× | {ns[hi] / 1000:.2f} |")
print()
for kb in sizes:
    ratios = ", ".join(
        f"{c}: {per_req[(kb, 'handoff')][c] / per_req[(kb, 'relay')][c]:.3f}" for c in counts)
    print(f"{kb}{' KB' if kb.isdigit() else ''}: router CPU per request, handoff / relay, per node count: {ratios}")
PY
