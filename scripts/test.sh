#!/usr/bin/env bash
# The project's test command: formatting, lints, no import circles between the files of a
# crate, the API docs built without a warning, then every test of the workspace, and the
# tests on the shared real logs when they sit beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
python3 scripts/module-cycles.py
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
cargo test --workspace --locked
# The scripts below drive the binary the tests just built (no second build of it).
export LARDER="${LARDER:-${CARGO_TARGET_DIR:-$PWD/target}/debug/larder}"
# The dashboard in headless Chromium and promtool on /metrics (installs both if missing).
./scripts/check-cockpit.sh
# `larder up --hosts`: hosts of their own (needs root and iproute2, as CI has them).
./scripts/test-hosts.sh
# `larder up --origin` in front of nginx: byte-exact, and Ctrl-C leaves nothing behind.
./scripts/check-up-origin.sh
if [ -d ../shared/traces ]; then
    ./scripts/test-real-logs.sh
else
    echo "note: ../shared/traces not beside the checkout: real-log tests not run (scripts/test-real-logs.sh)"
fi
