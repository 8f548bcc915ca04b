#!/usr/bin/env bash
# Whether two larder binaries' simulators decide alike: `larder sim` output (text and
# `--json`) compared byte for byte on the runs below, its timing lines (replay speed,
# wall and CPU time) left out. A change meant only to make the simulator faster must
# leave every figure as it was. Not a test: the runs take minutes.
#
#   bench/sim-same-decisions.sh BASE NEW
#
# Runs: the EPA log at 8 nodes, every placement policy, shared and per-router placement
# (TRACE, default ../shared/traces/epa_aug95.log.gz beside the repository; skipped with a
# note when absent); Zipf at 100 nodes with 1 and 4 routers; Zipf at 1,000 nodes with 1
# and 64 routers (BIG_REQUESTS requests, default 2000000). Exits 1 on the first
# difference, with a diff.
set -euo pipefail

BASE=${1:?usage: $0 BASE NEW}
NEW=${2:?usage: $0 BASE NEW}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TRACE=${TRACE:-$ROOT/../shared/traces/epa_aug95.log.gz}
BIG_REQUESTS=${BIG_REQUESTS:-2000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

untimed() { # the output without its timing lines and fields
    grep -v -E '^(replayed [0-9]+ requests in|CPU time )' |
        sed -E 's/"(replay_rps|replay_rps_cpu|wall_seconds|cpu_seconds)":[-0-9.e+]*,?//g'
}

same() { # same LABEL ARGS...: run both binaries, text and JSON, and compare
    local label=$1
    shift
    local format
    for format in text json; do
        local extra=()
        [ "$format" = json ] && extra=(--json)
        "$BASE" sim "$@" "${extra[@]}" 2>&1 | untimed >"$dir/base"
        "$NEW" sim "$@" "${extra[@]}" 2>&1 | untimed >"$dir/new"
        if ! cmp -s "$dir/base" "$dir/new"; then
            echo "DIFFERENT: $label ($format)"
            diff "$dir/base" "$dir/new" | head -20
            exit 1
        fi
    done
    echo "same: $label ($(wc -l <"$dir/base") lines of JSON)"
}

if [ -f "$TRACE" ]; then
    for placement in shared per-router; do
        same "EPA log, 8 nodes, $placement" --trace "$TRACE" --nodes 8 --cache-mb 11 \
            --policy wrr,least,hash,bounded,lard,lard-r,hacc --placement "$placement"
    done
else
    echo "note: $TRACE not found, EPA runs skipped"
fi
same "Zipf, 100 nodes, routers 1,4" --gen zipf --alpha 0.8 --dataset-mb 600 --nodes 100 \
    --cache-mb 8 --requests 1000000 --routers 1,4 --policy lard,lard-r,hacc
same "Zipf, 1000 nodes, routers 1,64" --gen zipf --alpha 0.8 --dataset-mb 6000 --nodes 1000 \
    --cache-mb 8 --requests "$BIG_REQUESTS" --routers 1,64 --policy lard,lard-r
echo "all runs identical"
