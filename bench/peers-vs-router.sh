#!/usr/bin/env bash
# Peers against a router tier on one machine: `larder up --peers` (every node a peer that
# takes clients and forwards the rest, no router) and `larder up` (the same nodes behind
# one router), each serving the synthetic store with the `larder bench` line it prints,
# side by side A B A B. Per run: req/s, errors and the nodes' cache hit ratio (from their
# load reports, read before and after). On one loopback no link limits anything: this
# compares placement (hit ratio) and the cost of the extra process boundary, not links.
#
# Settings (environment): LARDER (release binary; built if unset), NODES (4), CACHE_MB (16),
# SECONDS_EACH (10), ROUNDS (2), STORE_DIR (a temporary directory). Touches only loopback.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$ROOT/bench/lib.sh"
LARDER=$(larder_binary "$ROOT")
NODES=${NODES:-4}
CACHE_MB=${CACHE_MB:-16}
SECONDS_EACH=${SECONDS_EACH:-10}
ROUNDS=${ROUNDS:-2}
WORK=$(mktemp -d)
STORE_DIR=${STORE_DIR:-$WORK/store}
UP_PID=
cleanup() {
    if [ -n "$UP_PID" ]; then kill -TERM "$UP_PID" 2>/dev/null || true; wait "$UP_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# hits_misses ADDR...: the nodes' hits and misses, summed: "HITS MISSES".
hits_misses() {
    local h=0 m=0 a j
    for a in "$@"; do
        j=$(curl -s --max-time 5 "http://$a/.larder/load")
        h=$((h + $(echo "$j" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["hits"])')))
        m=$((m + $(echo "$j" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["misses"])')))
    done
    echo "$h $m"
}

# run SYSTEM: one measured run of `larder up` (router) or `larder up --peers` (peers).
run() {
    local system=$1 flags=() out="$WORK/up-$1.out" i load nodes before after report
    [ "$system" = peers ] && flags=(--peers)
    "$LARDER" up "${flags[@]}" --nodes "$NODES" --cache-mb "$CACHE_MB" --listen 127.0.0.1:0 \
        --store-dir "$STORE_DIR" >"$out" 2>&1 &
    UP_PID=$!
    for i in $(seq 1 600); do
        grep -q 'larder up: ready' "$out" && break
        kill -0 "$UP_PID" 2>/dev/null || { cat "$out" >&2; exit 1; }
        sleep 0.2
    done
    grep -q 'larder up: ready' "$out" || { cat "$out" >&2; exit 1; }
    load=$(sed -n 's/^ *load *larder //p' "$out" | sed "s/--duration 10s/--duration ${SECONDS_EACH}s/")
    if [ "$system" = peers ]; then
        mapfile -t nodes < <(awk '$1 == "peer" { print $5 }' "$out")
    else
        mapfile -t nodes < <(awk '$1 == "node" { sub("http://", "", $3); print $3 }' "$out")
    fi
    # shellcheck disable=SC2086
    "$LARDER" $load --warmup 0s >/dev/null   # fills the caches as the run will use them
    read -r -a before < <(hits_misses "${nodes[@]}")
    # shellcheck disable=SC2086
    report=$("$LARDER" $load --warmup 0s)
    read -r -a after < <(hits_misses "${nodes[@]}")
    kill -TERM "$UP_PID"; wait "$UP_PID" || true; UP_PID=
    local rps errors hits misses
    rps=$(echo "$report" | sed -n 's/^ *requests *[0-9]* (\([0-9.]*\) req\/s).*/\1/p')
    errors=$(echo "$report" | sed -n 's/^ *errors *\([0-9]*\) .*/\1/p')
    hits=$((after[0] - before[0])); misses=$((after[1] - before[1]))
    /usr/bin/python3 -c "import sys; h,m=int(sys.argv[3]),int(sys.argv[4]); print(f'| {sys.argv[1]} | {sys.argv[2]} | {h/(h+m) if h+m else 0:.3f} | {sys.argv[5]} |')" \
        "$system" "$rps" "$hits" "$misses" "$errors"
}

echo "larder up vs larder up --peers: $NODES nodes of $CACHE_MB MiB, ${SECONDS_EACH}s each after as long of warm-up, $ROUNDS rounds"
echo "| system | req/s | hit ratio | errors |"
echo "|---|---:|---:|---:|"
for _ in $(seq 1 "$ROUNDS"); do
    run router
    run peers
done
