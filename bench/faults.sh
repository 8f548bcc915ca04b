#!/usr/bin/env bash
# The long faults, on real processes: three larder nodes and larder route (active health
# checks every 200 ms) on free loopback ports, a closed-loop keep-alive load of USERS
# clients for DURATION seconds per fault, the fault injected a third of the way in:
#
#   node killed       SIGKILL to one node (its GETs go to the others)
#   node restarted    the killed node started again on its port (it must get traffic again)
#   node hung         SIGSTOP to one node for HANG seconds, then SIGCONT
#   node slowed       the node stopped and continued every 20 ms for a third of the run
#   router SIGHUP     five reloads of the config, one every 200 ms
#   router SIGTERM    the router drains and exits (requests after the exit fail to connect)
#
# Prints one row per fault: requests, failed, the slowest request, and the outcome. A node
# fault passes with 0 failed (an idempotent GET is retried on another node, and a request
# held by a hung node is released when health checks take the node down); the restart
# also needs the node to serve again; SIGHUP needs 0 failed; SIGTERM needs the router to
# exit 0 within its drain time. Exits non-zero if any fault did not pass.
#
# Settings (environment): DURATION seconds per fault (9), USERS (16), HANG seconds (3),
# LARDER (path to a release binary; built if unset). Touches only loopback.
set -euo pipefail

DURATION=${DURATION:-9}
USERS=${USERS:-16}
HANG=${HANG:-3}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ensure_tools curl
root=$(cd "$here/.." && pwd)
larder=$(larder_binary "$root")

start_work
small_docroot
node_pids=()
node_ports=()
for _ in 1 2 3; do
    start_larder_node "$larder" "$work/www"
    node_pids+=("${pids[-1]}")
    node_ports+=("$node_port")
done
admin_port=$(free_port)
{
    echo "[health]"
    echo 'path = "/f.txt"'
    echo "interval_ms = 200"
    echo "timeout_ms = 200"
    echo "slow_start_ms = 1000"
    for p in "${node_ports[@]}"; do printf '[[nodes]]\naddr = "127.0.0.1:%s"\n' "$p"; done
} >"$work/route.toml"
route_port=$(free_port)
"$larder" route --config "$work/route.toml" --listen "127.0.0.1:$route_port" \
    --admin "127.0.0.1:$admin_port" --threads 1 2>>"$work/route.err" &
router=$!
pids+=("$router")
wait_port "$route_port"
url="http://127.0.0.1:$route_port/f.txt"

# node_requests I: requests the router has dispatched to node I (0-based) so far.
node_requests() {
    curl -fsS "http://127.0.0.1:$admin_port/stats" |
        python3 -c "import json,sys; print(json.load(sys.stdin)['nodes'][$1]['requests'])"
}

# slow_node PID SECONDS: stop and continue PID every 20 ms for SECONDS.
slow_node() {
    local end=$((SECONDS + $2))
    while [ "$SECONDS" -lt "$end" ]; do
        kill -STOP "$1"
        sleep 0.02
        kill -CONT "$1"
        sleep 0.02
    done
}

# fault NAME: what happens a third of the way into the load; sets $outcome when the
# fault itself decides (else the failed count does).
fault() {
    case $1 in
        "node killed")
            kill -KILL "${node_pids[2]}"
            ;;
        "node restarted")
            before=$(node_requests 2)
            "$larder" node --listen "127.0.0.1:${node_ports[2]}" --docroot "$work/www" \
                --threads 1 2>>"$work/node.err" &
            node_pids[2]=$!
            pids+=("$!")
            ;;
        "node hung")
            kill -STOP "${node_pids[1]}"
            sleep "$HANG"
            kill -CONT "${node_pids[1]}"
            ;;
        "node slowed")
            slow_node "${node_pids[0]}" $((DURATION / 3))
            ;;
        "router SIGHUP")
            for _ in 1 2 3 4 5; do
                kill -HUP "$router"
                sleep 0.2
            done
            ;;
        "router SIGTERM")
            kill -TERM "$router"
            local started=$SECONDS status=0
            wait "$router" || status=$?
            outcome="exit $status after $((SECONDS - started)) s"
            [ "$status" -eq 0 ] || outcome="FAIL: $outcome"
            ;;
    esac
}

printf '%-16s %9s %7s %10s  %s\n' fault requests failed max_ms outcome
all_ok=1
for name in "node killed" "node restarted" "node hung" "node slowed" "router SIGHUP" \
    "router SIGTERM"; do
    "$larder" bench --url "$url" --users "$USERS" --duration "${DURATION}s" --timeout 20s \
        --json "$work/run.json" >"$work/run.out" 2>&1 &
    load=$!
    sleep $((DURATION / 3))
    outcome=""
    fault "$name"
    wait "$load" || true
    read -r requests failed max_ms < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
dist = r["latency_distribution"]
print(r["requests"], r["errors"]["total"], f"{dist[-1][1]:.0f}" if dist else "-")' "$work/run.json")
    if [ -z "$outcome" ]; then
        if [ "$failed" -eq 0 ]; then outcome="ok"; else outcome="FAIL: $failed failed"; fi
        if [ "$name" = "node restarted" ] && [ "$(node_requests 2)" -le "$before" ]; then
            outcome="FAIL: the restarted node got no traffic"
        fi
    fi
    case $outcome in FAIL*) all_ok=0 ;; esac
    printf '%-16s %9s %7s %10s  %s\n' "$name" "$requests" "$failed" "$max_ms" "$outcome"
done
[ "$all_ok" -eq 1 ]
