#!/usr/bin/env bash
# The tests on the shared real logs (EPA-HTTP 1995, an Apache combined log), which live in
# ../shared/traces beside the checkout, not in the repository. Fails when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
traces=../shared/traces
for log in epa_aug95.log.gz apache_combined_2015.log; do
    if [ ! -f "$traces/$log" ]; then
        echo "error: $traces/$log not found; the real-log tests need ../shared/traces beside the checkout" >&2
        exit 1
    fi
done
# --workspace, as the test command builds it: the same features, so nothing is rebuilt.
cargo test --workspace --test real_logs --locked -- --ignored
