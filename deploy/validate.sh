#!/usr/bin/env bash
# Validates the Kubernetes manifests in deploy/kubernetes (and its peers/) against the Kubernetes API
# schemas that PyPI's kubernetes-validate carries (no schema is downloaded at run time),
# installed into a virtual environment under $LARDER_VENV (default
# ~/.cache/larder/validate-venv) on first use. Strict: unknown fields are errors.
# Also checks that the router configuration inside the ConfigMap parses as the router
# reads it (cargo test runs that check, in crates/router/src/config.rs).
set -euo pipefail
cd "$(dirname "$0")"
version=${KUBERNETES_VERSION:-1.37.0}
venv=${LARDER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/larder/validate-venv}
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    command -v python3 >/dev/null || { echo "validate.sh needs python3" >&2; exit 1; }
    python3 -m venv "$venv" 2>/dev/null || {
        apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv "$venv"
    }
    "$venv/bin/pip" install -q 'kubernetes-validate==1.37.0'
fi
"$venv/bin/kubernetes-validate" --strict --kubernetes-version "$version" kubernetes/*.yaml kubernetes/peers/*.yaml
