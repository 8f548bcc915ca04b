#!/usr/bin/env bash
# Peers on one host (`larder peer`, SO_REUSEPORT on one address), relaying against handing
# off (`larder peer --handoff`): with handoff a peer's distributor passes each plain
# connection to the node of its first request, and that node serves a later request that
# belongs elsewhere as `--handoff-later` says: `forward` fetches it from its node over
# pooled keep-alive connections (back-end forwarding), `hand-on` hands the connection on
# to that node. Two workloads over keep-alive connections: `one` (every request asks for
# one page, so a connection's requests keep one owner) and `many` (each request asks for
# the next of FILES pages, so consecutive requests on a connection change owner about
# (PEERS-1)/PEERS of the time). For each workload, ROUNDS times every mode of MODES in
# turn (A B C A B C), it prints req/s, the CPU time all peers spent per request (their
# threads' run time, from /proc/PID/task/*/schedstat), the handoffs and fallbacks the
# peers counted, the requests the nodes forwarded, and the load average; then per
# workload the medians and each mode's ratio to the relay.
#
# Settings (environment): LARDER (release binary; built if unset), PEERS (2), FILES (16),
# SIZE_KB (13), POLICY (hash: each page has one owner), WORKLOADS ("one many"),
# MODES ("relay forward hand-on"), CONNECTIONS (50), WRK_THREADS (1), DURATION seconds
# (5), ROUNDS (2).
# Installs wrk and curl with apt-get when missing. Touches only loopback. Every process it
# starts is stopped on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

PEERS=${PEERS:-2}
FILES=${FILES:-16}
SIZE_KB=${SIZE_KB:-13}
POLICY=${POLICY:-hash}
WORKLOADS=${WORKLOADS:-"one many"}
MODES=${MODES:-"relay forward hand-on"}
CONNECTIONS=${CONNECTIONS:-50}
WRK_THREADS=${WRK_THREADS:-1}
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}

ensure_tools wrk curl
LARDER=$(larder_binary "$ROOT")
start_work

mkdir -p "$work/www"
for i in $(seq 0 $((FILES - 1))); do
    head -c "$((SIZE_KB * 1024))" /dev/urandom >"$work/www/page-$i.bin"
done
cat >"$work/many.lua" <<LUA
local i = 0
request = function()
    i = i + 1
    return wrk.format("GET", "/page-" .. (i % $FILES) .. ".bin")
end
LUA

# counted: "HANDOFFS FALLBACKS FORWARDED" summed over every peer's /stats and every
# node's load report.
counted() {
    local admin backend h=0 f=0 w=0 line
    for admin in "${ADMINS[@]}"; do
        line=$(curl -s --max-time 5 "http://127.0.0.1:$admin/stats" |
            /usr/bin/python3 -c 'import json,sys; h=json.load(sys.stdin)["handoff"]; print(h["handoffs"], h["fallbacks"])')
        h=$((h + ${line% *}))
        f=$((f + ${line#* }))
    done
    for backend in "${BACKENDS[@]}"; do
        line=$(curl -s --max-time 5 "http://127.0.0.1:$backend/.larder/load" |
            /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin).get("forwarded", 0))')
        w=$((w + line))
    done
    echo "$h $f $w"
}

# ready: every peer's distributor has a load report from every node (and, with handoff,
# every node's socket).
ready() {
    local admin
    for admin in "${ADMINS[@]}"; do
        curl -s --max-time 5 "http://127.0.0.1:$admin/stats" | /usr/bin/python3 -c '
import json, sys
nodes = json.load(sys.stdin)["nodes"]
want = int(sys.argv[1]); handoff = sys.argv[2] == "handoff"
ok = len(nodes) == want and all(n.get("report") and (not handoff or n["report"].get("handoff_socket")) for n in nodes)
sys.exit(0 if ok else 1)' "$PEERS" "$1" || return 1
    done
}

# start_peers MODE: PEERS peers on one shared port, relaying or handing off (later requests
# as MODE says); sets $PORT, $ADMINS, $BACKENDS and $PEER_PIDS.
start_peers() {
    local mode=$1 i j args
    PORT=$(free_port)
    ADMINS=()
    BACKENDS=()
    PEER_PIDS=()
    for i in $(seq 1 "$PEERS"); do BACKENDS+=("$(free_port)"); done
    for i in $(seq 0 $((PEERS - 1))); do
        args=(--listen "127.0.0.1:$PORT" --backend "127.0.0.1:${BACKENDS[$i]}"
            --docroot "$work/www" --threads 1 --policy "$POLICY" --name "p$i")
        for j in $(seq 0 $((PEERS - 1))); do
            [ "$j" = "$i" ] || args+=(--peer "127.0.0.1:${BACKENDS[$j]}")
        done
        [ "$mode" != relay ] &&
            args+=(--handoff --handoff-later "$mode" --handoff-socket "$work/p$i.sock")
        ADMINS+=("$(free_port)")
        "$LARDER" peer "${args[@]}" --admin "127.0.0.1:${ADMINS[$i]}" 2>>"$work/peer.err" &
        pids+=($!)
        PEER_PIDS+=($!)
        wait_port "${ADMINS[$i]}"
    done
    wait_port "$PORT"
    for _ in $(seq 1 100); do
        ready "$([ "$mode" = relay ] && echo relay || echo handoff)" && return 0
        sleep 0.1
    done
    echo "the peers did not hear every node within 10 s" >&2
    exit 1
}

# measure WORKLOAD MODE: one run; prints a row and appends "WORKLOAD MODE RPS NS" to
# $work/runs.
measure() {
    local workload=$1 mode=$2 out rps requests c0=0 c1=0 h0 h1 pid wrk_args
    start_peers "$mode"
    wrk_args=(-t"$WRK_THREADS" -c"$CONNECTIONS")
    [ "$workload" = many ] && wrk_args+=(-s "$work/many.lua")
    # Warm-up: every page read and cached, connections pooled.
    wrk "${wrk_args[@]}" -d1s "http://127.0.0.1:$PORT/page-0.bin" >/dev/null
    for pid in "${PEER_PIDS[@]}"; do c0=$((c0 + $(run_ns "$pid"))); done
    h0=$(counted)
    out=$(wrk "${wrk_args[@]}" -d"${DURATION}s" "http://127.0.0.1:$PORT/page-0.bin")
    for pid in "${PEER_PIDS[@]}"; do c1=$((c1 + $(run_ns "$pid"))); done
    h1=$(counted)
    stop_pids
    if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
        echo "wrk saw errors:" >&2
        echo "$out" >&2
        exit 1
    fi
    rps=$(echo "$out" | awk '/^Requests\/sec:/ { print $2 }')
    requests=$(echo "$out" | awk '/requests in/ { print $1 }')
    /usr/bin/python3 - "$workload" "$mode" "$rps" "$requests" "$c0" "$c1" "$h0" "$h1" \
        "$(cut -d' ' -f1 /proc/loadavg)" "$work/runs" <<'PY'
import sys
workload, mode, rps, reqs, c0, c1, h0, h1, load, runs = sys.argv[1:]
rps, reqs = float(rps), int(reqs)
ns = (int(c1) - int(c0)) / reqs
(ha, fa, wa), (hb, fb, wb) = (map(int, h0.split()), map(int, h1.split()))
print(f"| {workload} | {mode} | {rps:,.0f} | {ns / 1000:.2f} | {hb - ha} | {fb - fa} | {wb - wa} | {load} |",
      flush=True)
with open(runs, "a") as f:
    f.write(f"{workload} {mode} {rps} {ns}\n")
PY
}

echo "$PEERS peers (policy $POLICY), $FILES pages of $SIZE_KB KB, wrk -t$WRK_THREADS -c$CONNECTIONS -d${DURATION}s, $ROUNDS rounds of: $MODES."
echo
echo "| workload | mode | req/s | peers' µs CPU/req | handoffs | fallbacks | forwarded | load avg |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
: >"$work/runs"
for workload in $WORKLOADS; do
    for _ in $(seq 1 "$ROUNDS"); do
        for mode in $MODES; do
            measure "$workload" "$mode"
        done
    done
done

echo
/usr/bin/python3 - "$work/runs" $MODES <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    workload, mode, rps, ns = line.split()
    runs[(workload, mode)].append((float(rps), float(ns)))
modes = sys.argv[2:]
base = modes[0]
print(f"Medians; ratios against {base}")
print()
print("| workload | mode | req/s | × req/s | µs CPU/req | × CPU/req |")
print("|---|---|---:|---:|---:|---:|")
for workload in dict.fromkeys(k[0] for k in runs):
    med = {m: [statistics.median(x[i] for x in runs[(workload, m)]) for i in (0, 1)]
           for m in modes}
    br, bn = med[base]
    for m in modes:
        r, n = med[m]
        print(f"| {workload} | {m} | {r:,.0f} | {r / br:.2f}× | {n / 1000:.2f} | {n / bn:.2f}× |")
PY
