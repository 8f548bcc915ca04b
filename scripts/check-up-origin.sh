#!/usr/bin/env bash
# `larder up --origin` in front of a real web server, as a user would run it: starts nginx
# (one worker) serving a small site on a free loopback port, starts `larder up --origin`
# in front of it, fetches every file of the site through larder's router twice and
# compares each body with the file byte for byte, then presses Ctrl-C (SIGINT) and checks
# that `larder up` exited and that none of the processes it started is left behind.
# Installs nginx when it is missing.
#
# Usage: scripts/check-up-origin.sh   (the larder binary is $LARDER, else a debug build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../bench/lib.sh
. "$root/bench/lib.sh"

ensure_tools nginx
nginx=$(tool_path nginx)
if [ -z "${LARDER:-}" ]; then
    (cd "$root" && cargo build -q -p larder)
    LARDER=${CARGO_TARGET_DIR:-$root/target}/debug/larder
fi

start_work
mkdir -p "$work/site/docs" "$work/nginx"
# nginx's worker may run as another user: it must be able to read the site.
chmod a+rx "$work"
# The site: files of several sizes (one above a typical socket buffer), random bytes.
for size in 1 700 4096 65537 300000 1048576; do
    head -c "$size" /dev/urandom >"$work/site/docs/f$size.bin"
done
printf '<html>hello</html>\n' >"$work/site/index.html"

start_nginx_site "$nginx" 256

router_port=$(free_port)
# Job control for this one start: a background job of a script ignores SIGINT otherwise,
# and Ctrl-C is what the check sends.
set -m
"$LARDER" up --origin "http://127.0.0.1:$origin_port" --nodes 2 --cache-mb 8 \
    --listen "127.0.0.1:$router_port" --admin 127.0.0.1:0 --store-dir "$work/store" \
    >"$work/up.out" 2>"$work/up.err" &
up=$!
set +m
pids+=("$up")
wait_port "$router_port" || { cat "$work/up.out" "$work/up.err" >&2; exit 1; }
children=$(pgrep -P "$up" | tr '\n' ' ')
[ -n "$children" ] || { echo "larder up started no processes" >&2; exit 1; }

checked=0
for round in 1 2; do
    for f in "$work"/site/docs/*.bin "$work/site/index.html"; do
        path=${f#"$work/site"}
        curl -sS --fail --max-time 30 -o "$work/got" "http://127.0.0.1:$router_port$path"
        if ! cmp -s "$f" "$work/got"; then
            echo "FAIL: $path (round $round) differs from the origin's file" >&2
            exit 1
        fi
        checked=$((checked + 1))
    done
done

kill -INT "$up"
# Bounded: larder up stops its children within its grace period.
for _ in $(seq 1 150); do
    kill -0 "$up" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$up" 2>/dev/null; then
    echo "FAIL: larder up still runs 15 s after Ctrl-C" >&2
    exit 1
fi
wait "$up" 2>/dev/null || true
left=()
for pid in $children; do
    if kill -0 "$pid" 2>/dev/null; then left+=("$pid"); fi
done
if [ ${#left[@]} -gt 0 ]; then
    echo "FAIL: processes left behind after Ctrl-C: ${left[*]}" >&2
    exit 1
fi
echo "larder up --origin: $checked fetches byte-exact in front of nginx; Ctrl-C left no process behind ($(echo "$children" | wc -w) stopped)"
