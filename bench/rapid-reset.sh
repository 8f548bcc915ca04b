#!/usr/bin/env bash
# Rapid Reset (CVE-2023-44487) against larder route's HTTP/2 front door: a normal client
# (h2load, prior knowledge, steady requests of a 1 KiB file) alone and with an attacker
# beside it that opens streams and cancels them (HEADERS then RST_STREAM) as fast as it
# can, reconnecting at once whenever the router closes its connection
# (crates/router/examples/rapid_reset.rs). The normal client asks at a steady rate
# (CLIENTS x RATE requests/s) that the router serves with room to spare, as a site's real
# clients do; what it loses beside the attacker is what the attack takes from it. Phases
# alternate A B A B ... in one run: A = normal client alone, B = normal client + attacker, each PHASE seconds.
#
# Figures (medians over the ROUNDS pairs):
#  - kept: the normal client's requests/s in B as a ratio to its requests/s in the A just
#    before it. The defence holds when it is at least 0.90.
#  - attacker's share of the router's CPU: in A every router CPU second is the normal
#    client's, which gives the router's CPU cost per normal request. In B the normal
#    client's part is its requests times that cost; the rest of the router's CPU seconds
#    in B is what the attack took:  share = 1 - reqs_B * (cpu_A / reqs_A) / cpu_B.
#    With two clients, a fair share is at most one half.
#    Also printed: the router's CPU use (CPU seconds per second) in A and in B.
#
# Placement on a 2-core machine: the router (one worker thread) runs on CPU 0, the node,
# h2load and the attacker on CPU 1 (taskset), so the router's core does only the
# router's work and the figures are about the router. The attacker runs at nice
# ATTACKER_NICE (19) so that, sharing CPU 1, it takes the core's spare time rather than
# the normal client's and the node's: a real attacker brings its own machine. It still
# writes tens of millions of streams in a phase; ATTACKER_NICE=0 shows the same run with
# the client side contended as well. Settings (environment): LARDER
# (a release binary; built if unset), ATTACKER (the rapid_reset example built in release;
# built if unset), ROUNDS (3), PHASE (seconds, 5), CLIENTS (h2load -c, 10), STREAMS
# (h2load -m, 10), RATE (requests/s of each h2load client, 500), ATTACK_CONNECTIONS (4),
# ATTACKER_NICE (19), ATTACKER_FROM (the attacker's own loopback address, 127.0.0.2: an
# attacker is another client than the normal one, and the router's calm-down refuses its
# address, not theirs). Touches only loopback.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
PHASE=${PHASE:-5}
CLIENTS=${CLIENTS:-10}
STREAMS=${STREAMS:-10}
RATE=${RATE:-500}
ATTACK_CONNECTIONS=${ATTACK_CONNECTIONS:-4}
ATTACKER_NICE=${ATTACKER_NICE:-19}
ATTACKER_FROM=${ATTACKER_FROM:-127.0.0.2}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)

ensure_tools h2load:nghttp2-client taskset:util-linux
larder=$(larder_binary "$root")
attacker=${ATTACKER:-}
if [ -z "$attacker" ]; then
    (cd "$root" && cargo build --release -q -p router --example rapid_reset) >&2
    attacker="${CARGO_TARGET_DIR:-$root/target}/release/examples/rapid_reset"
fi

start_work
small_docroot
taskset -c 1 true # fails early where there is no second CPU
node_port=$(free_port)
taskset -c 1 "$larder" node --listen "127.0.0.1:$node_port" --docroot "$work/www" \
    --threads 1 2>>"$work/node.err" &
pids+=($!)
wait_port "$node_port"
port=$(free_port)
taskset -c 0 "$larder" route --listen "127.0.0.1:$port" --admin "" \
    --node "127.0.0.1:$node_port" --threads 1 2>>"$work/route.err" &
router=$!
pids+=("$router")
wait_port "$port"
tick=$(getconf CLK_TCK)

# router_cpu: the router's CPU seconds so far (user + system, all its threads).
router_cpu() {
    awk -v t="$tick" '{ sub(/.*\) /, ""); printf "%.3f\n", ($12 + $13) / t }' "/proc/$router/stat"
}

# phase NAME ATTACK: one phase; prints "NAME reqs rps cpu_seconds [attacker line]".
phase() {
    local name=$1 attack=$2 before after out="$work/h2load.txt" apid=""
    if [ "$attack" = yes ]; then
        RAPID_RESET_FROM=$ATTACKER_FROM taskset -c 1 nice -n "$ATTACKER_NICE" \
            "$attacker" "127.0.0.1:$port" "$PHASE" "$ATTACK_CONNECTIONS" \
            >"$work/attack.txt" &
        apid=$!
    fi
    before=$(router_cpu)
    taskset -c 1 h2load -c "$CLIENTS" -m "$STREAMS" --rps "$RATE" -D "$PHASE" \
        "http://127.0.0.1:$port/f.txt" >"$out" 2>&1
    after=$(router_cpu)
    [ -z "$apid" ] || wait "$apid"
    local reqs rps
    reqs=$(awk '/^requests:/ { print $8 }' "$out")
    rps=$(awk '/^finished in/ { print $4 }' "$out")
    if [ -z "$reqs" ] || [ -z "$rps" ]; then
        echo "h2load gave no figures:" >&2
        cat "$out" >&2
        exit 1
    fi
    echo "$name $reqs $rps $(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.3f", a - b }')" \
        "$([ "$attack" = yes ] && cat "$work/attack.txt")"
}

echo "router: larder route, 1 thread on CPU 0; node, h2load (-c $CLIENTS -m $STREAMS, $RATE req/s each) and attacker ($ATTACK_CONNECTIONS connections, nice $ATTACKER_NICE) on CPU 1; $PHASE s phases"
: >"$work/phases.txt"
for round in $(seq 1 "$ROUNDS"); do
    phase "A$round" no | tee -a "$work/phases.txt"
    phase "B$round" yes | tee -a "$work/phases.txt"
done

python3 - "$work/phases.txt" "$PHASE" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
phase = float(sys.argv[2])
a = [r for r in rows if r[0].startswith("A")]
b = [r for r in rows if r[0].startswith("B")]
kept, share, cpu_a, cpu_b = [], [], [], []
for ra, rb in zip(a, b):
    reqs_a, rps_a, sec_a = int(ra[1]), float(ra[2]), float(ra[3])
    reqs_b, rps_b, sec_b = int(rb[1]), float(rb[2]), float(rb[3])
    kept.append(rps_b / rps_a)
    share.append(1 - reqs_b * (sec_a / reqs_a) / sec_b if sec_b > 0 else 0.0)
    cpu_a.append(sec_a / phase)
    cpu_b.append(sec_b / phase)
med = statistics.median
print(f"normal client kept {med(kept):.3f} of its requests/s beside the attacker "
      f"(median of {len(kept)} A/B pairs: {', '.join(f'{k:.3f}' for k in kept)})")
print(f"attacker's share of the router's CPU: {med(share):.3f} "
      f"(pairs: {', '.join(f'{s:.3f}' for s in share)}); "
      f"router CPU use alone {med(cpu_a):.2f}, with attacker {med(cpu_b):.2f} CPU s/s")
PY
