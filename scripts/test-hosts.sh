#!/usr/bin/env bash
# The tests of hosts of their own (`larder up --hosts`): network namespaces, a bridge and
# tc qdiscs, which need root and iproute2 (`ip`, `tc`). Installs iproute2 when it is
# missing (and nginx and varnish, which the origin experiment's test runs); fails, saying
# why, when not run as root (CI runs as root).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../bench/lib.sh
. "$root/bench/lib.sh"
if [ "$(id -u)" != 0 ]; then
    echo "error: the --hosts tests need root (network namespaces, a bridge, tc); run scripts/test-hosts.sh as root" >&2
    exit 1
fi
ensure_tools ip:iproute2 tc:iproute2 nginx varnishd:varnish
cd "$root"
# --workspace, as the test command builds it: the same features, so nothing is rebuilt.
cargo test --workspace --test up_hosts_cli --locked -- --ignored
