#!/usr/bin/env bash
# HTTP/2 through larder route with a real client, curl: downloads and uploads of 0 B, 1 B,
# 64 KiB, 1 MiB and 8 MiB, each checked byte-exact, over TLS (ALPN h2, `curl --http2
# --cacert`, the router tests' localhost certificate) and on the plain listener (`curl
# --http2-prior-knowledge`). Downloads come from a larder node and are compared with
# cmp; uploads (POST and PUT, `--data-binary @file`) go to a small back-end that answers
# with the SHA-256 of the body it received, compared with the file's. Every transfer
# must have been HTTP/2 (curl's %{http_version}). Prints one line per check and exits
# non-zero if any fails.
#
# Installs curl with apt-get when missing. Settings (environment): LARDER (path to a
# release binary; built if unset). Touches only loopback.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
certs="$root/crates/router/tests/tls"
ensure_tools curl
larder=$(larder_binary "$root")

start_work
sizes=(0 1 65536 1048576 8388608)
mkdir -p "$work/www"
for size in "${sizes[@]}"; do
    head -c "$size" /dev/urandom >"$work/www/f$size"
done
start_larder_node "$larder" "$work/www"

# The upload back-end: every POST or PUT is answered with the SHA-256 (hex) of its body,
# Content-Length or chunked; anything else with 404. HTTP/1.1 with keep-alive, as the
# router's pools expect.
sink_port=$(free_port)
python3 - "$sink_port" <<'PY' 2>>"$work/sink.err" &
import hashlib, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def answer(self):
        digest = hashlib.sha256(self.body()).hexdigest().encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(digest)))
        self.end_headers()
        self.wfile.write(digest)

    do_POST = do_PUT = answer

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
PY
pids+=($!)
wait_port "$sink_port"

# Two routers: one in front of the node (downloads), one in front of the sink (uploads),
# each with a plain and a TLS listener.
# Sets $plain and $tls; run in this shell (not in a subshell), so the routers' pids reach
# $pids and the exit trap stops them.
routes() {
    local backend=$1
    plain=$(free_port)
    tls=$(free_port)
    start_larder_route "$larder" "$plain" --node "127.0.0.1:$backend" --threads 1 \
        --tls-listen "127.0.0.1:$tls" --tls-cert "$certs/localhost.pem" \
        --tls-key "$certs/localhost.key" --max-body-bytes $((16 << 20))
    wait_port "$tls"
}
routes "$node_port"
get_plain=$plain get_tls=$tls
routes "$sink_port"
up_plain=$plain up_tls=$tls

failed=0
# check NAME OK: print the line, count a failure.
check() {
    if [ "$2" = ok ]; then
        echo "ok    $1"
    else
        echo "FAIL  $1 ($2)"
        failed=$((failed + 1))
    fi
}

# curl_over LISTENER PORT PATH ARGS...: curl speaking HTTP/2 to the router's LISTENER
# (tls or plain) on PORT for PATH; prints the HTTP version it used, then its status.
curl_over() {
    local listener=$1 port=$2 path=$3
    shift 3
    if [ "$listener" = tls ]; then
        curl -sS --http2 --cacert "$certs/first-ca.pem" -w '%{http_version} %{http_code}' \
            --resolve "localhost:$port:127.0.0.1" "$@" "https://localhost:$port$path"
    else
        curl -sS --http2-prior-knowledge -w '%{http_version} %{http_code}' "$@" \
            "http://127.0.0.1:$port$path"
    fi
}

for listener in tls plain; do
    if [ "$listener" = tls ]; then gp=$get_tls up=$up_tls; else gp=$get_plain up=$up_plain; fi
    for size in "${sizes[@]}"; do
        got="$work/got-$listener-$size"
        how=$(curl_over "$listener" "$gp" "/f$size" -o "$got" 2>&1 || true)
        if [ "$how" != "2 200" ]; then
            check "GET  $size B over $listener" "curl said: $how"
        elif cmp -s "$got" "$work/www/f$size"; then
            check "GET  $size B over $listener" ok
        else
            check "GET  $size B over $listener" "body differs"
        fi
        want=$(sha256sum <"$work/www/f$size" | cut -d' ' -f1)
        for method in POST PUT; do
            out="$work/up-$listener-$method-$size"
            how=$(curl_over "$listener" "$up" "/up$size" -X "$method" -o "$out" \
                --data-binary "@$work/www/f$size" 2>&1 || true)
            name=$(printf "%-4s %s B over %s" "$method" "$size" "$listener")
            if [ "$how" != "2 200" ]; then
                check "$name" "curl said: $how"
            elif [ "$(tr -d '\n' <"$out")" = "$want" ]; then
                check "$name" ok
            else
                check "$name" "the back-end got a different body"
            fi
        done
    done
done
echo "$failed failed"
[ "$failed" -eq 0 ]
