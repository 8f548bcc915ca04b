#!/usr/bin/env bash
# WebSockets through `larder route`, with a real client and server (Debian's
# python3-websockets): an echo server behind the router, then a client that sends
# MESSAGES messages (default 10000) of 1 B to 1 MiB (sizes spread evenly on a log scale,
# random bytes) through the router and checks each echo byte for byte; then, with a
# tunnel open, the router is sent SIGTERM and the client must see the connection close
# cleanly, and the router exit, within DRAIN_LIMIT seconds (default 10).
# Prints one line per check and exits non-zero when one fails. Installs
# python3-websockets when it is missing.
#
# Usage: bench/websocket-echo.sh   (the larder binary is $LARDER, else a release build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib.sh
. "$root/bench/lib.sh"
MESSAGES=${MESSAGES:-10000}
DRAIN_LIMIT=${DRAIN_LIMIT:-10}

# Debian's Python, which the Debian package installs for (a python3 earlier on PATH, a
# pyenv's say, would not see it).
py=/usr/bin/python3
if ! "$py" -c 'import websockets' 2>/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3-websockets >/dev/null
fi
larder=$(larder_binary "$root")
start_work

cat >"$work/echo.py" <<'PY'
import asyncio, sys, websockets

async def echo(ws, path=None):
    try:
        async for message in ws:
            await ws.send(message)
    except websockets.ConnectionClosed:
        pass

async def main():
    async with websockets.serve(echo, "127.0.0.1", int(sys.argv[1]), max_size=2 << 20):
        await asyncio.Future()

asyncio.run(main())
PY

cat >"$work/client.py" <<'PY'
import asyncio, math, os, random, sys, time, websockets

async def echoes(uri, count):
    rng = random.Random(7)
    sent = 0
    async with websockets.connect(uri, max_size=2 << 20) as ws:
        for i in range(count):
            size = int(round(math.exp(math.log(1 << 20) * i / max(count - 1, 1))))
            message = rng.randbytes(size)
            await ws.send(message)
            echoed = await ws.recv()
            if echoed != message:
                sys.exit(f"message {i} of {size} bytes came back different")
            sent += size
    return sent

async def drained(uri, limit, pid):
    async with websockets.connect(uri) as ws:
        await ws.send(b"before")
        assert await ws.recv() == b"before"
        os.kill(pid, 15)
        started = time.monotonic()
        try:
            await asyncio.wait_for(ws.recv(), limit)
            sys.exit("a message arrived after the drain")
        except websockets.ConnectionClosed:
            return time.monotonic() - started

uri, count, limit, pid = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
started = time.monotonic()
sent = asyncio.run(echoes(uri, count))
took = time.monotonic() - started
print(f"echo: {count} messages of 1 B to 1 MiB, {sent / 1e6:.1f} MB each way, byte-exact, in {took:.1f} s")
closed = asyncio.run(drained(uri, limit, pid))
print(f"drain: an open tunnel closed {closed:.2f} s after SIGTERM")
PY

echo_port=$(free_port)
"$py" "$work/echo.py" "$echo_port" 2>>"$work/echo.err" &
pids+=($!)
wait_port "$echo_port"
route_port=$(free_port)
start_larder_route "$larder" "$route_port" --node "127.0.0.1:$echo_port"
"$py" "$work/client.py" "ws://127.0.0.1:$route_port/chat" "$MESSAGES" "$DRAIN_LIMIT" "$router"
for _ in $(seq 1 $((DRAIN_LIMIT * 10))); do
    kill -0 "$router" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$router" 2>/dev/null; then
    echo "the router did not exit within ${DRAIN_LIMIT} s of SIGTERM" >&2
    exit 1
fi
wait "$router" && echo "router: exited 0 after the drain"
