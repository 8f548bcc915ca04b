#!/usr/bin/env bash
# Simulator vs reality: does `larder sim`, with a cost model fitted to
# this machine, predict what `larder bench experiment locality` measured: each policy's
# aggregate hit ratio, and its throughput as a multiple of wrr's, within 20%?
#
#   bash bench/sim-vs-reality.sh [DIR]     # DIR: an experiment's output (rows.json,
#                                          # shape.json); default bench/results/experiments/locality
#
# The fit and the comparison are `larder bench experiment --sim-fit DIR` (its --help and
# crates/lab/src/sim_fit.rs explain them); this script only picks the binary and the disk
# read time. A run made with other flags than the experiment's defaults needs the same
# shape flags here, e.g. `bash bench/sim-vs-reality.sh DIR --dataset-mb 48`.
#
# Settings (environment): LARDER (a release binary; built if unset), DISK_US (default: the
# mean in ../disk.txt that bench/experiments.sh's `disk` part measures, else 55).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

DIR=${1:-$ROOT/bench/results/experiments/locality}
if [ ! -f "$DIR/rows.json" ]; then
    echo "no rows.json in $DIR: run bench/experiments.sh (or larder bench experiment) first" >&2
    exit 2
fi
if [ -z "${DISK_US:-}" ] && [ -f "$DIR/../disk.txt" ]; then
    DISK_US=$(grep -o 'mean [0-9.]* us' "$DIR/../disk.txt" | head -1 | cut -d' ' -f2)
fi
LARDER=$(larder_binary "$ROOT")
export LARDER DISK_US=${DISK_US:-55}

"$LARDER" bench experiment --sim-fit "$DIR" --sim-disk-us "$DISK_US" "${@:2}"
