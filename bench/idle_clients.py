"""Idle keep-alive clients of larder route and the router's RSS, shared by
bench/idle-connections.sh and bench/idle-bursts.sh (imported with this folder on
PYTHONPATH).

A client speaks one of three protocols (PROTOCOLS): HTTP/1.1 on the plain listener,
HTTP/2 by prior knowledge on the plain listener ("h2c"), or HTTP/2 over TLS chosen by
ALPN as browsers do ("h2"). HTTP/2 is spoken by hand (a few frames and static-table
HPACK), so the scripts need nothing beyond Python's standard library."""
import resource, socket, ssl, struct, time

PROTOCOLS = ("http1", "h2c", "h2")
REQUEST = b"GET /f.txt HTTP/1.1\r\nHost: bench\r\n\r\n"
POLL = 0.1
BODY = 1024

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x7
END_STREAM, ACK = 0x1, 0x1


def raise_fd_limit():
    """Room for thousands of sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def settled_rss(pid, quiet):
    """RSS once it has not moved for `quiet` seconds (at most 20 s)."""
    last, since, start = rss_kb(pid), time.time(), time.time()
    while time.time() - since < quiet and time.time() - start < 20:
        time.sleep(POLL)
        now = rss_kb(pid)
        if now != last:
            last, since = now, time.time()
    return last


def recv_some(s):
    chunk = s.recv(65536)
    if not chunk:
        raise SystemExit("connection closed early")
    return chunk


def get_http1(s):
    """One GET of the 1 KB file on `s`, its whole answer read."""
    s.sendall(REQUEST)
    data = b""
    while not (b"\r\n\r\n" in data and len(data.split(b"\r\n\r\n", 1)[1]) >= BODY):
        data += recv_some(s)


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack_literal(index, value):
    """A header field by its static-table name `index`, literal value, not indexed."""
    assert index < 15 and len(value) < 127
    return bytes([index, len(value)]) + value


def get_h2(s, scheme):
    """The preface, then one GET of the 1 KB file on stream 1, its whole answer read
    (the server's SETTINGS acknowledged on the way)."""
    block = (
        b"\x82"  # :method GET
        + (b"\x87" if scheme == b"https" else b"\x86")  # :scheme
        + hpack_literal(4, b"/f.txt")  # :path
        + hpack_literal(1, b"bench")  # :authority
    )
    s.sendall(PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, 0x4 | END_STREAM, 1, block))
    data, body = b"", 0
    while True:
        while len(data) < 9 or len(data) < 9 + int.from_bytes(data[:3], "big"):
            data += recv_some(s)
        length, kind, flags = int.from_bytes(data[:3], "big"), data[3], data[4]
        stream = int.from_bytes(data[5:9], "big") & 0x7FFFFFFF
        data = data[9 + length:]
        if kind == SETTINGS and not flags & ACK:
            s.sendall(frame(SETTINGS, ACK, 0))
        elif kind in (RST_STREAM, GOAWAY):
            raise SystemExit(f"HTTP/2 frame {kind} from the router")
        elif stream == 1 and kind == DATA:
            body += length
        if stream == 1 and kind in (DATA, HEADERS) and flags & END_STREAM:
            if body < BODY:
                raise SystemExit(f"short answer: {body} bytes")
            return


def client(protocol, port):
    """A connected client socket speaking `protocol`, and how to do one GET on it."""
    s = socket.create_connection(("127.0.0.1", port))
    if protocol == "http1":
        return s, get_http1
    if protocol == "h2c":
        return s, lambda s: get_h2(s, b"http")
    s = TLS.wrap_socket(s, server_hostname="localhost")
    if s.selected_alpn_protocol() != "h2":
        raise SystemExit("the router did not choose h2 by ALPN")
    return s, lambda s: get_h2(s, b"https")


def tls_context():
    # The router's test certificate: what is measured is the router, not the check.
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    return ctx


TLS = tls_context()


def warm_up(port, protocol="http1"):
    """A few requests on fresh connections, closed again."""
    for _ in range(20):
        s, get = client(protocol, port)
        get(s)
        s.close()


def open_idle(port, n, protocol="http1"):
    """`n` keep-alive connections, each after one GET, left open."""
    conns = []
    for _ in range(n):
        s, get = client(protocol, port)
        get(s)
        conns.append(s)
    return conns


def measure_idle_cost(pid, port, n, protocol, what=""):
    """One burst of `n` idle connections to the server `pid` on `port`: its RSS settled
    before, with all open and after all closed, and the cost per idle connection
    (bench/idle-connections.sh, bench/h2-idle-floor.sh)."""
    raise_fd_limit()
    # Quiet for 3 s: the router returns freed memory within a second or two of a burst.
    warm_up(port, protocol)
    idle = settled_rss(pid, 3.0)
    conns = open_idle(port, n, protocol)
    with_open = settled_rss(pid, 3.0)
    for s in conns:
        s.close()
    after = settled_rss(pid, 3.0)
    print(f"connections            {n} ({protocol}{what})")
    print(f"RSS idle               {idle / 1024:.1f} MiB")
    print(f"RSS with all open      {with_open / 1024:.1f} MiB")
    print(f"RSS after close        {after / 1024:.1f} MiB")
    print(f"per idle connection    {(with_open - idle) * 1024 / n / 1000:.1f} KB")
    print(f"after close / idle     {after / idle:.2f}")
