#!/usr/bin/env bash
# The headline experiments, on real processes and sockets (loopback only):
#
#   1. locality:   4 nodes with unequal caches (16/16/8/8 MiB, HACC's 64/64/32 MB scaled),
#                  cache-bound dynamic and static (O_DIRECT) workloads, uniform and Zipf,
#                  and the EPA log if present; larder route with wrr, least, hash, bounded,
#                  lard, lard-r, hacc, and HAProxy and nginx as anchors.
#   2. keep-alive: the same cluster, new connection per request vs persistent connections.
#   3. classes:    static files plus 5% CPU-heavy dynamic requests, `class` vs `rr`.
#   4. ramp:       DBench's ramp on the uniform workloads: users added every second until
#                  a response takes longer than 200 ms; the users each front-end sustained.
#   5. disk:       what a static miss costs here: random 16 KiB O_DIRECT reads of the
#                  locality experiment's store, one at a time (after `locality`).
#   6. simulator:  bench/sim-vs-reality.sh: `larder sim` fitted to the locality rows.
#   7. origin:     the nodes as a cache tier in front of an origin (nginx, one worker,
#                  serving the store from disk) whose link is limited to $ORIGIN_MBIT
#                  Mbit/s with tc, inside a private network namespace (unshare -n);
#                  larder's policies against HAProxy, nginx and Varnish's shard director,
#                  on the synthetic stores and, with caches scaled to it, the EPA log;
#                  then large objects (2-64 MiB, whole and by ranges, and a cold crowd on
#                  the largest) over a link of $ORIGIN_LARGE_MBIT Mbit/s: wrr and lard-r
#                  against a Varnish caching cluster and nginx's slice cache of the same
#                  size and memory.
#
# Installs haproxy, nginx and varnish with apt-get when missing (see bench/lib.sh). Each part
# writes table.md, rows.json, shape.json and SVG charts under $OUT (default bench/results/experiments).
#
#   bash bench/experiments.sh                 # everything (about an hour on 2 cores)
#   PARTS="locality classes" bash bench/experiments.sh
#   ROUNDS=3 DURATION=10s bash bench/experiments.sh
#
# Run it on a quiet machine: every figure is a median of A B A B rounds measured side by
# side, but other work on the same cores still moves them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

PARTS=${PARTS:-"locality disk ramp keepalive classes simulator origin"}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
WARMUP=${WARMUP:-4s}
OUT=${OUT:-$ROOT/bench/results/experiments}
TRACE=${TRACE:-$ROOT/../shared/traces/epa_aug95.log.gz}
ORIGIN_MBIT=${ORIGIN_MBIT:-80}
ORIGIN_QUEUE_KB=${ORIGIN_QUEUE_KB:-1024}
ORIGIN_LARGE_MBIT=${ORIGIN_LARGE_MBIT:-400}

ensure_tools haproxy nginx varnishd:varnish
LARDER=$(larder_binary "$ROOT")
COMMON=(--rounds "$ROUNDS" --duration "$DURATION" --warmup "$WARMUP"
    --haproxy "$(tool_path haproxy)" --nginx "$(tool_path nginx)")

for part in $PARTS; do
    case "$part" in
    locality)
        workloads=dynamic-uniform,static-uniform,dynamic-zipf,static-zipf
        extra=()
        if [ -f "$TRACE" ]; then
            workloads+=,trace
            extra=(--trace "$TRACE")
        fi
        "$LARDER" bench experiment locality --workloads "$workloads" "${extra[@]}" \
            "${COMMON[@]}" --out "$OUT/locality"
        ;;
    keepalive)
        "$LARDER" bench experiment locality --workloads dynamic-uniform \
            --connections keep-alive,per-request --systems wrr,hash,lard,lard-r,haproxy \
            "${COMMON[@]}" --out "$OUT/keepalive"
        ;;
    classes)
        # Same caches everywhere (the static files fit): the difference is where the
        # CPU-heavy requests run. Nodes are pinned half to each CPU, like two machines.
        # A fixed loop count (about 9 ms of CPU on a 2.5 GHz Xeon) costs the same whatever
        # else runs when the nodes start.
        "$LARDER" bench experiment classes --cache-mb 16,16,16,16 --dataset-mb 16 \
            --dyn-iterations "${CLASS_DYN_ITERATIONS:-1500000}" --rate "${CLASS_RATE:-2000}" \
            "${COMMON[@]}" --out "$OUT/classes"
        ;;
    ramp)
        "$LARDER" bench experiment locality --workloads dynamic-uniform,static-uniform \
            --ramp 32:32:1s --ramp-timeout 200ms --ramp-max-users 1024 \
            --haproxy "$(tool_path haproxy)" --nginx "$(tool_path nginx)" \
            --rounds 1 --duration 2s --warmup "$WARMUP" --out "$OUT/ramp"
        ;;
    disk)
        store=$(ls -d "${XDG_CACHE_HOME:-$HOME/.cache}"/larder/store-v1-fixed-16384-seed1-* | sort -t- -k6 -n | tail -1)
        mkdir -p "$OUT"
        python3 - "$store" <<'PY' | tee "$OUT/disk.txt"
import mmap, os, random, sys, time
root = sys.argv[1]
files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
random.seed(1)
buf = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT needs
lat = []
for path in random.sample(files, min(3000, len(files))):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    t = time.perf_counter()
    os.readv(fd, [memoryview(buf)[:16384]])
    lat.append(time.perf_counter() - t)
    os.close(fd)
lat.sort()
mean = sum(lat) / len(lat)
print(f"O_DIRECT 16 KiB reads of {root}: {len(lat)} reads, mean {mean*1e6:.0f} us, "
      f"p50 {lat[len(lat)//2]*1e6:.0f} us, p99 {lat[len(lat)*99//100]*1e6:.0f} us "
      f"({1/mean:.0f} reads/s one at a time)")
PY
        ;;
    simulator)
        LARDER="$LARDER" bash "$ROOT/bench/sim-vs-reality.sh" "$OUT/locality"
        ;;
    origin)
        # The usual sizing (16/16/8/8 MiB, a 36 MiB store); for the EPA log (108 MiB) the
        # caches are scaled by 3 so that it too is 3/4 of all caches, more than twice the
        # largest. The warm-ups let every front-end fetch the data set once through the
        # link (36 MiB and 108 MiB at 10 MB/s take about 4 and 11 s). tc shapes only this
        # namespace's loopback, never the machine's.
        origin=(bench experiment origin --origin-mbit "$ORIGIN_MBIT"
            --origin-queue-kb "$ORIGIN_QUEUE_KB" --varnish "$(tool_path varnishd)"
            --haproxy "$(tool_path haproxy)" --nginx "$(tool_path nginx)"
            --systems wrr,hash,bounded,lard,lard-r,haproxy,nginx,varnish
            --rounds "$ROUNDS" --duration "$DURATION")
        unshare -n "$LARDER" "${origin[@]}" --workloads static-uniform,static-zipf \
            --warmup "${ORIGIN_WARMUP:-6s}" --out "$OUT/origin"
        if [ -f "$TRACE" ]; then
            unshare -n "$LARDER" "${origin[@]}" --workloads trace --trace "$TRACE" \
                --cache-mb 48,48,24,24 --warmup "${ORIGIN_TRACE_WARMUP:-12s}" \
                --out "$OUT/origin/trace"
        fi
        # Large objects: 16 objects of 2-64 MiB (about 300 MiB), more than one node's
        # 96 MiB but within the cluster's 384 MiB; the link is raised so that the
        # warm-up fetches the data set about once (300 MiB at 50 MB/s take 6 s). Each
        # anchor is a caching cluster of its own with the same caches in front of the
        # same origin; the figures count what the origin sent.
        unshare -n "$LARDER" bench experiment origin --origin-mbit "$ORIGIN_LARGE_MBIT" \
            --origin-queue-kb "$ORIGIN_QUEUE_KB" --varnish "$(tool_path varnishd)" \
            --nginx "$(tool_path nginx)" --systems wrr,lard-r,varnish-cluster,nginx-slice \
            --workloads video,video-crowd --cache-mb 96,96,96,96 --rounds "$ROUNDS" \
            --duration "${ORIGIN_LARGE_DURATION:-8s}" --warmup "${ORIGIN_LARGE_WARMUP:-10s}" \
            --out "$OUT/origin/large"
        ;;
    *)
        echo "unknown part $part (locality, disk, ramp, keepalive, classes, simulator, origin)" >&2
        exit 2
        ;;
    esac
done
