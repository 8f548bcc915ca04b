#!/usr/bin/env bash
# Churn and flash crowds on real processes (`larder bench experiment churn`): 4 nodes with
# equal caches, the dynamic-uniform workload (a miss costs 2 ms of CPU), 32 users, figures
# every second. Each run warms up for $WARMUP; at its end comes the event, then $DURATION.
#
#   flash:    30% of the requests on one target (a view) from the event on; larder's
#             lard-r, lard, hash and bounded against HAProxy (hash-balance-factor 125, and
#             plain consistent hashing) and nginx (consistent hash).
#   members:  the last node added, restarted on its address (SIGKILL, started again), and
#             removed; lard-r, lard and hash, and HAProxy (its admin socket) for reference.
#
#   bash bench/churn.sh                      # both parts, one round (about 15 minutes)
#   PARTS=flash ROUNDS=3 bash bench/churn.sh
#   NODE_CPU_SHARE=0.25 PARTS=flash bash bench/churn.sh   # each node capped at 1/4 core
#
# NODE_CPU_SHARE caps every node process's CPU time at that share of one core (a cgroup
# per node; needs root), emulating nodes on machines of their own: without it the nodes,
# router and load generator share every core and no single node becomes a bottleneck.
#
# Writes table.md, timeline.json, timeline.csv and SVG line charts per part under $OUT
# (default bench/results/churn). Installs haproxy and nginx with apt-get when missing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

PARTS=${PARTS:-"flash members"}
ROUNDS=${ROUNDS:-1}
WARMUP=${WARMUP:-12s}
DURATION=${DURATION:-30s}
CACHES=${CACHES:-12,12,12,12}
OUT=${OUT:-$ROOT/bench/results/churn}

ensure_tools haproxy nginx
LARDER=$(larder_binary "$ROOT")
COMMON=(--rounds "$ROUNDS" --warmup "$WARMUP" --duration "$DURATION" --cache-mb "$CACHES"
    --haproxy "$(tool_path haproxy)" --nginx "$(tool_path nginx)")
if [ -n "${NODE_CPU_SHARE:-}" ]; then
    COMMON+=(--node-cpu-share "$NODE_CPU_SHARE")
fi

for part in $PARTS; do
    case "$part" in
    flash)
        "$LARDER" bench experiment churn --scenarios flash "${COMMON[@]}" \
            --systems lard-r,lard,hash,bounded,haproxy,haproxy-consistent,nginx \
            --out "$OUT/flash"
        ;;
    members)
        "$LARDER" bench experiment churn --scenarios add,restart,remove "${COMMON[@]}" \
            --systems lard-r,lard,hash,haproxy --out "$OUT/members"
        ;;
    *)
        echo "unknown part $part (flash, members)" >&2
        exit 2
        ;;
    esac
done
