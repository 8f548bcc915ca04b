#!/usr/bin/env bash
# Replay speed of two larder binaries side by side: the 1,000-node run of `larder sim`
# (lard-r, shared placement, one router), BASE then NEW, PAIRS times, each pair run back
# to back so that both see about the same machine. Prints simulated requests per CPU
# second of the simulation proper (workload generation excluded) for each run, the ratio
# of each pair, the geometric mean of the ratios and how many runs reached 1,000,000.
#
#   bench/sim-ab.sh BASE NEW
#
# Settings (environment): PAIRS (8), REQUESTS (2000000), NODES (1000), POLICY (lard-r),
# LOCK (a file: each pair runs under `flock LOCK`, so that benchmarks on a shared machine
# take turns; unset: no lock).
set -euo pipefail

BASE=${1:?usage: $0 BASE NEW}
NEW=${2:?usage: $0 BASE NEW}
PAIRS=${PAIRS:-8}
REQUESTS=${REQUESTS:-2000000}
NODES=${NODES:-1000}
POLICY=${POLICY:-lard-r}
rates=$(mktemp)
trap 'rm -f "$rates"' EXIT

rate() { # rate BINARY: simulated requests per CPU second of one run
    "$1" sim --gen zipf --alpha 0.8 --dataset-mb 6000 --nodes "$NODES" --cache-mb 8 \
        --requests "$REQUESTS" --policy "$POLICY" --json --timing |
        grep -o '"replay_rps_cpu":[0-9.e+]*' | head -1 | cut -d: -f2
}

pair() { # one pair, BASE first: prints "base new"
    echo "$(rate "$BASE") $(rate "$NEW")"
}

echo "larder sim, $POLICY at $NODES nodes, $REQUESTS requests: simulated requests per CPU second"
echo "pair base new new/base load"
ratios=()
for i in $(seq 1 "$PAIRS"); do
    if [ -n "${LOCK:-}" ]; then
        export -f rate pair
        export BASE NEW REQUESTS NODES POLICY
        read -r a b < <(flock "$LOCK" bash -c pair)
    else
        read -r a b < <(pair)
    fi
    ratio=$(awk "BEGIN { printf \"%.3f\", $b / $a }")
    ratios+=("$ratio")
    printf '%d %.0f %.0f %s %s\n' "$i" "$a" "$b" "$ratio" "$(cut -d' ' -f1 /proc/loadavg)"
    echo "$a $b" >>"$rates"
done
printf '%s\n' "${ratios[@]}" | awk '{ s += log($1); n++ } END { printf "geometric mean of new/base: %.3f over %d pairs\n", exp(s / n), n }'
awk '{ b += ($1 >= 1000000); n += ($2 >= 1000000); c++ }
    END { printf "at least 1,000,000: base %d of %d runs, new %d of %d\n", b, c, n, c }' "$rates"
