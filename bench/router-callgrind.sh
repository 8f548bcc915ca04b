#!/usr/bin/env bash
# Instructions per request in larder route, counted by callgrind: a figure that does not
# depend on what else the machine is doing, so two builds can be compared exactly.
#
# A larder node serves a file of SIZE_KB (1) KB; larder route (one thread, policy POLICY) runs under
# `valgrind --tool=callgrind` in front of it; wrk sends keep-alive requests for DURATION
# seconds after a warm-up of WARMUP seconds; the router's instructions over exactly the
# measured interval (callgrind's counters are zeroed after the warm-up and dumped after the
# measured run, so start-up, warm-up and shutdown are left out) are divided by the requests
# wrk completed in it. Two builds that serve different numbers of requests therefore still
# compare exactly.
#
# Settings (environment): LARDER (release binary; built if unset), LARDER_BASELINE
# (another larder binary, measured the same way right after, with the ratio printed),
# POLICY (hash: the policy both builds route with), DURATION seconds (10), WARMUP seconds (2), CONNECTIONS (10), KEEP (a directory to keep the callgrind outputs
# in, for callgrind_annotate), SIZE_KB (1), ROUTE_TUNING and BASELINE_TUNING (keys of the
# router config's [tuning] table for LARDER and for LARDER_BASELINE, e.g.
# "splice_min_bytes = 0", several separated by ";": the same binary twice then compares
# two settings), ROUTE_ARGS and BASELINE_ARGS (more `larder route` flags; for a baseline
# built before [tuning], its old flags such as --splice-min-bytes 0). Instructions are user space only: what a
# splice saves in the kernel does not show here, what it saves in the router does. Installs valgrind and wrk with apt-get when
# missing. Touches only loopback.
set -euo pipefail

DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
CONNECTIONS=${CONNECTIONS:-10}
SIZE_KB=${SIZE_KB:-1}
POLICY=${POLICY:-hash}
ROUTE_ARGS=${ROUTE_ARGS:-}
BASELINE_ARGS=${BASELINE_ARGS:-}
ROUTE_TUNING=${ROUTE_TUNING:-}
BASELINE_TUNING=${BASELINE_TUNING:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

. "$ROOT/bench/lib.sh"
ensure_tools valgrind wrk
LARDER=$(larder_binary "$ROOT")

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    if [ -n "${KEEP:-}" ]; then cp "$WORK"/*.out* "$KEEP"/ 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/www"
head -c $((SIZE_KB * 1024)) /dev/urandom >"$WORK/www/1.bin"
NPORT=$(free_port)
"$LARDER" node --docroot "$WORK/www" --listen "127.0.0.1:$NPORT" 2>"$WORK/node.log" &
PIDS+=("$!")
wait_port "$NPORT"

# instructions_per_request BINARY NAME FLAGS: prints "NAME: I instructions per request (R requests)".
instructions_per_request() {
    local port out requests pid total
    port=$(free_port)
    valgrind --tool=callgrind --callgrind-out-file="$WORK/$2.out" \
        "$1" route --listen "127.0.0.1:$port" --node "127.0.0.1:$NPORT" --policy "$POLICY" \
        --threads 1 --admin "" $3 2>"$WORK/$2.log" &
    pid=$!
    PIDS+=("$pid")
    # Under valgrind the router takes a while to start.
    wait_port "$port" 30
    wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" "http://127.0.0.1:$port/1.bin" >/dev/null
    # The counters start at zero after the warm-up (start-up and warm-up left out) and the
    # measured interval is dumped before the router is stopped (shutdown left out).
    callgrind_control --zero "$pid" >/dev/null 2>&1
    out=$(wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "http://127.0.0.1:$port/1.bin")
    requests=$(echo "$out" | awk '/requests in/ {print $1}')
    callgrind_control --dump=measured "$pid" >/dev/null 2>&1
    kill -TERM "$pid"
    wait "$pid" || true
    # The dump of the measured interval is the part whose trigger names it.
    total=$(awk '/^desc: Trigger: .*measured/ {m = 1} m && /^summary:/ {print $2; exit}' "$WORK/$2.out".*)
    python3 -c 'import sys; n, t, r = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]); print(f"{n}: {t / r:.0f} instructions per request ({r} requests)")' \
        "$2" "$total" "$requests"
}

A=$(instructions_per_request "$LARDER" larder \
    "$(tuning_flags "$WORK/larder-tuning.toml" "$ROUTE_TUNING") $ROUTE_ARGS")
echo "$A"
if [ -n "${LARDER_BASELINE:-}" ]; then
    B=$(instructions_per_request "$LARDER_BASELINE" baseline \
        "$(tuning_flags "$WORK/baseline-tuning.toml" "$BASELINE_TUNING") $BASELINE_ARGS")
    echo "$B"
    python3 -c 'import sys; a = float(sys.argv[1].split()[1]); b = float(sys.argv[2].split()[1]); print(f"larder/baseline instructions per request: {a / b:.3f}")' "$A" "$B"
fi
