#!/usr/bin/env bash
# Checks that a `larder bench --html` report renders: runs a short benchmark against a local
# server that names nodes in X-Larder-Node, screenshots the page in headless Chromium and
# checks the PNG shows the charts (enough pixels in the chart colours).
#
# Settings (environment): OUT (directory for report.html, report.json and report.png;
# default a fresh temp dir, kept), LARDER (path to the binary; built if unset).
# Installs Debian's chromium with apt-get when missing. Touches only loopback.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$(mktemp -d /tmp/larder-html-check.XXXXXX)}
mkdir -p "$OUT"

. "$ROOT/bench/lib.sh"
ensure_tools chromium
LARDER=$(larder_binary "$ROOT")

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# A keep-alive server on a free loopback port; three nodes take turns in X-Larder-Node,
# one answer in fifty is slow so the latency charts have a tail.
cat >"$WORK/server.py" <<'PY'
import http.server, itertools, socketserver, sys, time
turn = itertools.count()
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_GET(self):
        n = next(turn)
        if n % 50 == 0:
            time.sleep(0.02)
        body = b"x" * 1024
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Larder-Node", ["node-a", "node-b", "node-c"][n % 3 if n % 7 else 0])
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
python3 "$WORK/server.py" >"$WORK/port" &
SERVER_PID=$!
for _ in $(seq 1 50); do
    [ -s "$WORK/port" ] && break
    sleep 0.1
done
PORT=$(cat "$WORK/port")

"$LARDER" bench --url "http://127.0.0.1:$PORT/" --users 4 --duration 6s --epoch 500ms \
    --threads 1 --html "$OUT/report.html" --json "$OUT/report.json"

chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$WORK/profile" --window-size=1400,1500 --hide-scrollbars \
    --screenshot="$OUT/report.png" "file://$OUT/report.html" 2>"$WORK/chromium.log" || {
    cat "$WORK/chromium.log" >&2
    exit 1
}

# Decode the PNG (8-bit RGB/RGBA, non-interlaced, as Chromium writes it) and count pixels
# in the colours of the throughput line, the p99 line and the node bars.
python3 - "$OUT/report.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    chunk = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
        assert depth == 8 and colour in (2, 6), f"unexpected PNG format {depth}/{colour}"
        bpp = 3 if colour == 2 else 4
    elif kind == b"IDAT":
        idat += chunk
    pos += 12 + length
raw = zlib.decompress(idat)
stride = width * bpp
rows, prev, i = [], bytearray(stride), 0
for _ in range(height):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
def count(rgb):
    return sum(1 for r in rows for x in range(0, stride, bpp) if abs(r[x] - rgb[0]) + abs(r[x + 1] - rgb[1]) + abs(r[x + 2] - rgb[2]) < 24)
blue, red = count((0x4c, 0x78, 0xa8)), count((0xe4, 0x57, 0x56))
colours = len({bytes(r[x:x + 3]) for r in rows[::4] for x in range(0, stride, bpp * 4)})
print(f"{sys.argv[1]}: {width}x{height}, {len(data)} bytes, {colours} colours sampled, "
      f"{blue} px throughput/bar blue, {red} px p99 red")
ok = len(data) > 20_000 and colours > 20 and blue > 2_000 and red > 100
print("html report check:", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
