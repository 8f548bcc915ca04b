#!/usr/bin/env bash
# Replay speed of the simulator (a benchmark, not a test), for the issue's two claims:
#
# 1. `lard-r` at 16 nodes replays at least 2 million simulated requests per second of
#    wall time (generated Zipf workload, REQUESTS requests, data set 4× one node's cache).
# 2. A 1,000-node cluster over 10 million generated requests completes (BIG_DATASET_MB
#    data set, so that a thousand caches have something to share).
#
# For each run it prints the simulated throughput, the replay speed measured inside
# `larder sim` (per second of wall time and per second of the thread's CPU time, for the
# simulation proper, workload generation excluded) and the whole process's wall and CPU
# time. On a shared machine wall time inflates when other
# work competes for the cores; CPU time shows what the simulator itself needs.
#
# Settings (environment): REQUESTS (10000000), BIG_REQUESTS (10000000), BIG_NODES (1000),
# BIG_DATASET_MB (16000), POLICY (lard-r), LARDER (a release binary; built if unset).
set -euo pipefail

REQUESTS=${REQUESTS:-10000000}
BIG_REQUESTS=${BIG_REQUESTS:-10000000}
BIG_NODES=${BIG_NODES:-1000}
BIG_DATASET_MB=${BIG_DATASET_MB:-16000}
POLICY=${POLICY:-lard-r}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

. "$ROOT/bench/lib.sh"
LARDER=$(larder_binary "$ROOT")

field() { # field NAME JSON: a number from a one-line JSON object
    grep -o "\"$1\":[-0-9.e+]*" <<<"$2" | head -1 | cut -d: -f2
}

run() { # run LABEL ARGS...
    local label=$1
    shift
    local out times
    out=$(mktemp)
    times=$(mktemp)
    local start end
    start=$(date +%s.%N)
    TIMEFORMAT='%U %S'
    { time "$LARDER" sim "$@" --json --timing >"$out"; } 2>"$times"
    end=$(date +%s.%N)
    local line
    line=$(head -1 "$out")
    read -r user sys <"$times"
    printf '%s\n' "$label"
    printf '  simulated throughput  %12.1f req/s   hit ratio %.4f (ideal %.4f)\n' \
        "$(field throughput_rps "$line")" "$(field hit_ratio "$line")" \
        "$(field ideal_hit_ratio "$line")"
    printf '  replay speed          %12.0f simulated req per wall second (simulation only)\n' \
        "$(field replay_rps "$line")"
    printf '                        %12.0f simulated req per CPU second (simulation only)\n' \
        "$(field replay_rps_cpu "$line")"
    printf '  process               %12.2f s wall, %.2f s CPU (generation included)\n' \
        "$(awk "BEGIN { print $end - $start }")" "$(awk "BEGIN { print $user + $sys }")"
    rm -f "$out" "$times"
}

echo "larder sim replay speed ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
run "$POLICY at 16 nodes, $REQUESTS Zipf requests:" \
    --gen zipf --nodes 16 --requests "$REQUESTS" --policy "$POLICY"
run "$POLICY at $BIG_NODES nodes, $BIG_REQUESTS Zipf requests, ${BIG_DATASET_MB} MiB data set:" \
    --gen zipf --nodes "$BIG_NODES" --requests "$BIG_REQUESTS" --dataset-mb "$BIG_DATASET_MB" \
    --policy "$POLICY"
