#!/usr/bin/env bash
# HTTP/2 conformance of larder route's front door, by h2spec (the HTTP/2 conformance suite,
# 145 tests): against the TLS listener (ALPN h2, the router tests' localhost certificate,
# h2spec -t -k) and against the plain listener (prior knowledge), in front of one larder
# node. Prints each run's summary and the tests that failed; exits non-zero unless both
# pass every test.
#
# h2spec is installed with `go install` into target/h2spec (a GOPATH of this checkout's
# own) when missing; Go comes from PATH, /usr/local/go, or Debian's golang-go. Settings
# (environment): LARDER (path to a release binary; built if unset), TIMEOUT (seconds
# h2spec waits for each answer, 2). Touches only loopback.
set -euo pipefail

TIMEOUT=${TIMEOUT:-2}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/.." && pwd)
certs="$root/crates/router/tests/tls"

export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || ensure_tools go:golang-go
gopath="${CARGO_TARGET_DIR:-$root/target}/h2spec"
h2spec="$gopath/bin/h2spec"
if [ ! -x "$h2spec" ]; then
    GOPATH="$gopath" GOFLAGS=-modcacherw go install github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible
fi
larder=$(larder_binary "$root")

start_work
small_docroot
start_larder_node "$larder" "$work/www"
plain_port=$(free_port)
tls_port=$(free_port)
start_larder_route "$larder" "$plain_port" --node "127.0.0.1:$node_port" --threads 1 \
    --tls-listen "127.0.0.1:$tls_port" --tls-cert "$certs/localhost.pem" \
    --tls-key "$certs/localhost.key"
wait_port "$tls_port"

# run NAME FLAGS...: h2spec against the router; prints its summary and failures, and
# returns non-zero unless every test passed.
run() {
    local name=$1 out="$work/$1.txt"
    shift
    "$h2spec" -h 127.0.0.1 -o "$TIMEOUT" "$@" >"$out" 2>&1 || true
    local summary
    summary=$(grep -E '^[0-9]+ tests, [0-9]+ passed' "$out" | tail -1)
    echo "$name: ${summary:-no summary (h2spec failed to run)}"
    if grep -q '^Failures:' "$out"; then
        sed -n '/^Failures:/,$p' "$out" | grep -E '^ *[0-9]+\.[0-9.]+|^ *[×x✗]|Generic|HPACK|HTTP/2' | head -60
    fi
    [[ "$summary" =~ ^([0-9]+)\ tests,\ ([0-9]+)\ passed.*\ 0\ failed ]] &&
        [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
}

status=0
run "TLS (ALPN h2)" -p "$tls_port" -t -k || status=1
run "plain (prior knowledge)" -p "$plain_port" || status=1
exit $status
