"""Idle keep-alive clients of larder route and the router's RSS, shared by
bench/idle-connections.sh and bench/idle-bursts.sh (imported with this folder on
PYTHONPATH)."""
import resource, socket, time

REQUEST = b"GET /f.txt HTTP/1.1\r\nHost: bench\r\n\r\n"
POLL = 0.1


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


def get(s):
    """One GET of the 1 KB file on `s`, its whole answer read."""
    s.sendall(REQUEST)
    data = b""
    while not (b"\r\n\r\n" in data and len(data.split(b"\r\n\r\n", 1)[1]) >= 1024):
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("connection closed early")
        data += chunk


def warm_up(port):
    """A few requests on fresh connections, closed again."""
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", port))
        get(s)
        s.close()


def open_idle(port, n):
    """`n` keep-alive connections, each after one GET, left open."""
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        get(s)
        conns.append(s)
    return conns
