#!/usr/bin/env bash
# The standing corpus of request-smuggling and bad-input vectors
# (crates/router/tests/corpus/desync.txt, the one the router's tests run) sent through
# larder route, HAProxy and nginx, each in front of the same deliberately lenient recording
# back-end (Python, written here: the same leniency as the tests' back-end). Prints one
# markdown table, a row per vector: what each proxy answered (the status of every
# response, `-` for none) and flags: `SMUGGLED` when the back-end saw the hidden
# `/smuggled` request, `UNDELIVERED` when it saw a request whose response reached no client
# (within WAIT), `DESYNC` when a probe on a fresh connection afterwards got someone else's
# response. The last lines count them per proxy.
#
# Settings (environment): LARDER (path to a release binary; built if unset), WAIT seconds a
# client waits for answers after sending a vector (1). Installs haproxy and nginx with
# apt-get when missing. Takes a few minutes. Touches only loopback.
set -euo pipefail

WAIT=${WAIT:-1}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
corpus="$root/crates/router/tests/corpus/desync.txt"
ensure_tools haproxy nginx
larder=$(larder_binary "$root")

start_work

backend_port=$(free_port)
log_port=$(free_port)
# The lenient back-end: numbers every request it parses (X-Seen) and serves the record of
# what it saw on a second port (one line per request: id, target).
cat >"$work/backend.py" <<'EOF'
import socket, sys, threading
port, log_port = int(sys.argv[1]), int(sys.argv[2])
lock, seen = threading.Lock(), []

def find(b, n, start=0):
    i = b.find(n, start)
    return None if i < 0 else i

def parse(buf):
    ends = [i + k for i, k in ((find(buf, b"\r\n\r\n"), 4), (find(buf, b"\n\n"), 2)) if i is not None]
    if not ends:
        return None
    head_end = min(ends)
    lines = buf[:head_end].decode("latin-1").split("\n")
    parts = lines[0].split()
    target = parts[1] if len(parts) > 1 else ""
    chunked, length = False, None
    for line in lines[1:]:
        if ":" not in line:
            continue
        name, value = line.split(":", 1)
        name, value = name.strip().lower(), value.strip().lower()
        if name == "transfer-encoding" and "chunked" in value:
            chunked = True
        if name == "content-length" and length is None:
            digits = ""
            for c in value:
                if not c.isdigit():
                    break
                digits += c
            length = int(digits or "0")
    at = head_end
    if chunked:
        while True:
            nl = find(buf, b"\n", at)
            if nl is None:
                return None
            hexd = ""
            for c in buf[at:nl].decode("latin-1").strip():
                if c not in "0123456789abcdefABCDEF":
                    break
                hexd += c
            size = int(hexd or "0", 16)
            at = nl + 1
            if size == 0:
                while True:
                    nl = find(buf, b"\n", at)
                    if nl is None:
                        return None
                    empty = buf[at:nl].strip(b"\r") == b""
                    at = nl + 1
                    if empty:
                        return target, at
            if len(buf) < at + size:
                return None
            at += size
            nl = find(buf, b"\n", at)
            if nl is None:
                return None
            at = nl + 1
    n = length or 0
    return (target, head_end + n) if len(buf) - head_end >= n else None

def serve(conn):
    try:
        answer(conn)
    except OSError:
        pass  # a proxy reset the connection

def answer(conn):
    buf = b""
    with conn:
        while True:
            while True:
                got = parse(buf)
                if not got:
                    break
                target, used = got
                buf = buf[used:]
                with lock:
                    rid = len(seen)
                    seen.append(target)
                body = f"seen {target}".encode("latin-1")
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Seen: %d\r\n\r\n" % (len(body), rid) + body)
            data = conn.recv(65536)
            if not data:
                return
            buf += data

def log_server():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", log_port)); s.listen(16)
    while True:
        c, _ = s.accept()
        with lock:
            text = "".join(f"{i} {t}\n" for i, t in enumerate(seen))
        c.sendall(text.encode("latin-1")); c.close()

threading.Thread(target=log_server, daemon=True).start()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen(128)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
python3 "$work/backend.py" "$backend_port" "$log_port" &
pids+=($!)
wait_port "$backend_port"

larder_port=$(free_port)
start_larder_route "$larder" "$larder_port" --node "127.0.0.1:$backend_port" --threads 1

haproxy_port=$(free_port)
cat >"$work/haproxy.cfg" <<EOF
global
    maxconn 1000
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
    option http-keep-alive
frontend f
    bind 127.0.0.1:$haproxy_port
    default_backend b
backend b
    server s1 127.0.0.1:$backend_port
EOF
"$(tool_path haproxy)" -q -f "$work/haproxy.cfg" &
pids+=($!)

nginx_port=$(free_port)
mkdir -p "$work/nginx"
{
    nginx_conf_head "$work/nginx" 1024
    cat <<EOF
    upstream b { server 127.0.0.1:$backend_port; keepalive 16; }
    server {
        listen 127.0.0.1:$nginx_port;
        location / {
            proxy_pass http://b;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # Clients here send a vector and close their sending side; nginx would
            # otherwise abort the request upstream as if the client had gone.
            proxy_ignore_client_abort on;
        }
    }
}
EOF
} >"$work/nginx.conf"
"$(tool_path nginx)" -c "$work/nginx.conf" &
pids+=($!)
for port in "$larder_port" "$haproxy_port" "$nginx_port"; do wait_port "$port"; done

python3 - "$corpus" "$log_port" "$WAIT" \
    "larder route=$larder_port" "HAProxy $(haproxy -v 2>/dev/null | head -1 | awk '{print $3}')=$haproxy_port" \
    "nginx $(nginx -v 2>&1 | sed 's|.*/||')=$nginx_port" <<'EOF'
import re, socket, sys, time
corpus, log_port, wait = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
proxies = [a.rsplit("=", 1) for a in sys.argv[4:]]

def unescape(text):
    out, i = bytearray(), 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out += c.encode("latin-1"); i += 1; continue
        e = text[i + 1]
        if e == "x":
            out.append(int(text[i + 2:i + 4], 16)); i += 4; continue
        out += {"r": b"\r", "n": b"\n", "t": b"\t", "0": b"\0", "\\": b"\\"}[e]; i += 2
    return bytes(out)

vectors = []
for line in open(corpus, encoding="latin-1"):
    line = line.rstrip("\n")
    if line.strip() and not line.startswith("#"):
        name, raw = line.split(" | ", 1)
        vectors.append((name, unescape(raw)))

def seen():
    s = socket.create_connection(("127.0.0.1", log_port))
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return [l.split(" ", 1) for l in data.decode("latin-1").splitlines()]

def exchange(port, raw, half_close=True):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(wait)
    data = b""
    try:
        s.sendall(raw)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        while chunk := s.recv(65536):
            data += chunk
    except OSError:
        pass
    s.close()
    return data

status_re = re.compile(rb"(?:^|\n)HTTP/1\.[01] (\d{3})")
seen_re = re.compile(rb"(?i)x-seen: *(\d+)")
rows, smuggled, desynced = [], {p: 0 for p, _ in proxies}, {p: 0 for p, _ in proxies}
for i, (name, raw) in enumerate(vectors):
    cells = []
    for proxy, port in proxies:
        before = len(seen())
        data = exchange(int(port), raw)
        got = set(int(x) for x in seen_re.findall(data))
        statuses = [s.decode() for s in status_re.findall(data)] or ["-"]
        probe = f"/probe-{i}"
        reply = exchange(int(port), f"GET {probe} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode(), False)
        got |= set(int(x) for x in seen_re.findall(reply))
        time.sleep(0.05)
        after = seen()[before:]
        flags = []
        if any("smuggled" in t for _, t in after):
            flags.append("SMUGGLED"); smuggled[proxy] += 1
        elif any(int(rid) not in got for rid, _ in after):
            flags.append("UNDELIVERED"); smuggled[proxy] += 1
        if not reply.endswith(f"seen {probe}".encode()):
            flags.append("DESYNC"); desynced[proxy] += 1
        cells.append(" ".join(statuses + flags))
    rows.append((name, cells))

print("| vector | " + " | ".join(p for p, _ in proxies) + " |")
print("|---|" + "---|" * len(proxies))
for name, cells in rows:
    print(f"| {name} | " + " | ".join(cells) + " |")
print()
print(f"{len(vectors)} vectors.")
for proxy, _ in proxies:
    print(f"{proxy}: {smuggled[proxy]} smuggled or undelivered, {desynced[proxy]} desynced")
EOF
