#!/usr/bin/env bash
# Throughput of larder node against data set size, with a 64 MiB node cache and
# --direct-io (so every miss is a real disk read): the shape of Flash's Figure 9, a drop
# where the data set outgrows the cache.
#
# The document store comes from `larder trace gen` (fixed-size documents). For each data
# set size S, wrk requests documents uniformly at random from the first S MiB of the store,
# after a warm-up run; the node is restarted (cold cache) for every size. Prints a table
# (data set MiB, requests/s, hit ratio, disk MB/s) and writes it as CSV and as an SVG chart.
#
# Settings (environment): SIZES_MB ("32 48 64 96 128 192 256 384 512"), CACHE_MB (64),
# FILE_KIB (16), CONNECTIONS (64), DURATION seconds (10), WARMUP seconds (6),
# OUT (directory for the CSV and SVG; default bench/results), LARDER (release binary;
# built if unset). Installs wrk with apt-get when missing. Touches only loopback.
# Figures are noisy on a shared machine.
set -euo pipefail

SIZES_MB=${SIZES_MB:-"32 48 64 96 128 192 256 384 512"}
CACHE_MB=${CACHE_MB:-64}
FILE_KIB=${FILE_KIB:-16}
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-6}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/bench/results}

. "$ROOT/bench/lib.sh"
ensure_tools wrk
LARDER=$(larder_binary "$ROOT")
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

WORK=$(mktemp -d -p "${SWEEP_TMP:-/var/tmp}")
NODE_PID=
cleanup() {
    if [ -n "$NODE_PID" ]; then kill -TERM "$NODE_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

MAX=0
for s in $SIZES_MB; do [ "$s" -gt "$MAX" ] && MAX=$s; done
echo "generating a ${MAX} MiB store of ${FILE_KIB} KiB documents in $WORK"
"$LARDER" trace gen --dataset-mb "$MAX" --size-mix "fixed:${FILE_KIB}KiB" --dist uniform \
    --requests 1 -o "$WORK/gen.log" --docroot "$WORK/www" >/dev/null
# Documents in generation order, so the first N of them are a data set of N documents.
(cd "$WORK/www" && find . -type f -printf '%f %P\n' | sort | cut -d' ' -f2) >"$WORK/all.txt"

cat >"$WORK/pick.lua" <<'LUA'
local paths = {}
init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = "/" .. line end
  math.randomseed(42)
end
request = function()
  return wrk.format("GET", paths[math.random(#paths)])
end
LUA

load_field() {
    python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen(sys.argv[1]))[sys.argv[2]])' "http://127.0.0.1:$1/.larder/load" "$2"
}

mkdir -p "$OUT"
CSV="$OUT/node-dataset-sweep.csv"
echo "dataset_mib,requests_per_sec,hit_ratio,disk_read_mb_per_sec" >"$CSV"
printf '%12s %14s %10s %14s\n' "dataset MiB" "requests/s" "hit ratio" "disk MB/s"
for s in $SIZES_MB; do
    n=$((s * 1024 / FILE_KIB))
    head -n "$n" "$WORK/all.txt" >"$WORK/paths.txt"
    port=$(free_port)
    "$LARDER" node --docroot "$WORK/www" --listen "127.0.0.1:$port" --cache-mb "$CACHE_MB" \
        --direct-io --no-dynamic 2>>"$WORK/node.log" &
    NODE_PID=$!
    wait_port "$port"
    wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/pick.lua" "http://127.0.0.1:$port" \
        -- "$WORK/paths.txt" >/dev/null
    h0=$(load_field "$port" hits)
    m0=$(load_field "$port" misses)
    d0=$(load_field "$port" disk_read_bytes)
    rps=$(wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -s "$WORK/pick.lua" \
        "http://127.0.0.1:$port" -- "$WORK/paths.txt" | awk '/^Requests\/sec:/ {print $2}')
    d1=$(load_field "$port" disk_read_bytes)
    h1=$(load_field "$port" hits)
    m1=$(load_field "$port" misses)
    kill -TERM "$NODE_PID"
    wait "$NODE_PID" || true
    NODE_PID=
    ratio=$(python3 -c "h=$h1-$h0; m=$m1-$m0; print('%.3f' % (h / max(1, h + m)))")
    mbps=$(python3 -c "print('%.1f' % (($d1 - $d0) / 1e6 / $DURATION))")
    printf '%12s %14s %10s %14s\n' "$s" "$rps" "$ratio" "$mbps"
    echo "$s,$rps,$ratio,$mbps" >>"$CSV"
done

python3 - "$CSV" "$OUT/node-dataset-sweep.svg" "$CACHE_MB" "$FILE_KIB" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
xs = [float(r["dataset_mib"]) for r in rows]
ys = [float(r["requests_per_sec"]) for r in rows]
hr = [float(r["hit_ratio"]) for r in rows]
cache, kib = float(sys.argv[3]), sys.argv[4]
W, H, L, R, T, B = 640, 400, 70, 20, 40, 50
x0, x1 = math.log2(min(xs)), math.log2(max(xs))
ymax = max(ys) * 1.1 or 1
px = lambda x: L + (math.log2(x) - x0) / max(1e-9, x1 - x0) * (W - L - R)
py = lambda y: H - B - y / ymax * (H - T - B)
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">larder node: throughput vs data set size ({cache:.0f} MiB cache, --direct-io, {kib} KiB files)</text>',
       f'<line x1="{L}" y1="{H-B}" x2="{W-R}" y2="{H-B}" stroke="black"/>',
       f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H-B}" stroke="black"/>']
for i in range(6):
    y = ymax * i / 5
    out.append(f'<text x="{L-6}" y="{py(y)+4:.1f}" text-anchor="end">{y:.0f}</text>')
    out.append(f'<line x1="{L}" y1="{py(y):.1f}" x2="{W-R}" y2="{py(y):.1f}" stroke="#ddd"/>')
for x in xs:
    out.append(f'<text x="{px(x):.1f}" y="{H-B+16}" text-anchor="middle">{x:.0f}</text>')
if min(xs) <= cache <= max(xs):
    out.append(f'<line x1="{px(cache):.1f}" y1="{T}" x2="{px(cache):.1f}" y2="{H-B}" stroke="gray" stroke-dasharray="4 4"/>')
    out.append(f'<text x="{px(cache)+4:.1f}" y="{T+12}" fill="gray">cache size</text>')
pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys))
out.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
for x, y, h in zip(xs, ys, hr):
    out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="#1f77b4"/>')
    out.append(f'<text x="{px(x):.1f}" y="{py(y)-8:.1f}" text-anchor="middle" font-size="10" fill="#555">hit {h:.2f}</text>')
out.append(f'<text x="{(L+W-R)/2}" y="{H-12}" text-anchor="middle">data set size (MiB, log scale)</text>')
out.append(f'<text x="16" y="{(T+H-B)/2}" text-anchor="middle" transform="rotate(-90 16 {(T+H-B)/2})">requests per second</text>')
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
echo "wrote $CSV and $OUT/node-dataset-sweep.svg"
