# Shared by the benchmark scripts (sourced, not run): installing what a script needs,
# finding the larder binary, and loopback ports. Touches only loopback.

# ensure_tools TOOL[:PACKAGE]...: install the Debian package of each missing tool (the
# package has the tool's name unless given, as in varnishd:varnish), looking in /usr/sbin
# too since nginx, haproxy and varnishd live there.
ensure_tools() {
    local need=() spec tool
    for spec in "$@"; do
        tool=${spec%%:*}
        command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || need+=("${spec#*:}")
    done
    if [ ${#need[@]} -gt 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${need[@]}" >/dev/null
    fi
}

# tool_path TOOL: the tool's path (PATH first, then /usr/sbin).
tool_path() {
    command -v "$1" || echo "/usr/sbin/$1"
}

# larder_binary ROOT: $LARDER if set, else a release build of the workspace at ROOT.
larder_binary() {
    if [ -n "${LARDER:-}" ]; then
        echo "$LARDER"
        return
    fi
    (cd "$1" && cargo build --release -q -p larder) >&2
    echo "${CARGO_TARGET_DIR:-$1/target}/release/larder"
}

# free_port: a port free on 127.0.0.1 a moment ago.
free_port() {
    python3 - <<'PY'
# Below the kernel's ephemeral range, from which every connect takes its local port: until
# the caller binds it, no connection can take it (bind(0) would pick from that range).
import random, socket
try:
    low, high = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
except (OSError, ValueError):
    low, high = 32768, 60999
spans = [(10000, max(low, 10000)), (max(high + 1, 10000), 65536)]
first, end = max(spans, key=lambda s: s[1] - s[0])
candidates = random.sample(range(first, end), min(256, end - first)) + [0]
for port in candidates:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    print(s.getsockname()[1])
    break
PY
}

# wait_port PORT [SECONDS]: wait (at most SECONDS, 10 unless given) until something
# accepts on 127.0.0.1:PORT.
wait_port() {
    for _ in $(seq 1 $((${2:-10} * 10))); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    return 1
}

# start_work: a fresh temporary directory in $work, and an exit trap that kills every
# process whose pid a script added to $pids (pids+=($!)) and removes $work.
start_work() {
    work=$(mktemp -d)
    pids=()
    trap stop_work EXIT
}

stop_work() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}

# stop_pids: stops every process in $pids (SIGTERM), waits for each, and empties the list.
stop_pids() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}

# run_ns PID: CPU time (ns) all of PID's threads have run so far.
run_ns() {
    cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'
}

# start_larder_node LARDER DOCROOT: a larder node (one helper thread) on a free loopback
# port, serving DOCROOT; sets $node_port once it accepts.
start_larder_node() {
    node_port=$(free_port)
    "$1" node --listen "127.0.0.1:$node_port" --docroot "$2" --threads 1 \
        2>>"$work/node.err" &
    pids+=($!)
    wait_port "$node_port"
}

# tuning_flags FILE KEYS: the `larder route` flags that set the router config's [tuning]
# KEYS (TOML, e.g. "splice_min_bytes = 0", several separated by ";"), written to FILE as
# a config of that table alone (flags still give the nodes); nothing when KEYS is empty.
tuning_flags() {
    [ -n "$2" ] || return 0
    printf '[tuning]\n%s\n' "$2" | tr ';' '\n' >"$1"
    echo "--config $1"
}

# start_larder_route LARDER PORT ARGS...: larder route on 127.0.0.1:PORT (no admin
# listener) with ARGS; sets $router to its pid once it accepts.
start_larder_route() {
    local larder=$1 port=$2
    shift 2
    "$larder" route --listen "127.0.0.1:$port" --admin "" "$@" 2>>"$work/route.err" &
    router=$!
    pids+=("$router")
    wait_port "$port"
}

# nginx_conf_head DIR CONNECTIONS: the start of an nginx.conf for a foreground nginx with
# one worker whose pid, error log and temporary files live in DIR; it ends inside the
# `http {` block, where the caller adds its servers and the closing brace.
nginx_conf_head() {
    cat <<EOF
worker_processes 1;
daemon off;
error_log $1/error.log;
pid $1/nginx.pid;
events { worker_connections $2; }
http {
    access_log off;
    client_body_temp_path $1/body;
    proxy_temp_path $1/proxy;
    fastcgi_temp_path $1/fastcgi;
    uwsgi_temp_path $1/uwsgi;
    scgi_temp_path $1/scgi;
EOF
}

# start_nginx_site NGINX CONNECTIONS [HTTP_LINES [SERVER_LINES]]: nginx (one worker, files
# under $work/nginx) serving $work/site on a free loopback port with `expires 1h`,
# HTTP_LINES added to its http block and SERVER_LINES to its server; sets $origin_port
# once it accepts.
start_nginx_site() {
    origin_port=$(free_port)
    {
        nginx_conf_head "$work/nginx" "$2"
        cat <<EOF
    ${3:-}
    server {
        listen 127.0.0.1:$origin_port;
        root $work/site;
        expires 1h;
        ${4:-}
    }
}
EOF
    } >"$work/nginx/nginx.conf"
    "$1" -c "$work/nginx/nginx.conf" -p "$work/nginx" 2>>"$work/nginx.err" &
    pids+=($!)
    wait_port "$origin_port"
}

# small_docroot: $work/www holding f.txt, a 1 KiB file.
small_docroot() {
    mkdir -p "$work/www"
    head -c 1024 /dev/zero | tr '\0' 'x' >"$work/www/f.txt"
}

# start_idle_route LARDER PROTOCOL ARGS...: larder route (ARGS added) in front of the node
# started before, for clients speaking PROTOCOL (bench/idle_clients.py: http1, h2c, or h2
# over TLS with the test certificate); sets $router, and $client_port where those clients
# connect once it accepts.
start_idle_route() {
    local larder=$1 protocol=$2 root
    shift 2
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    route_port=$(free_port)
    client_port=$route_port
    case $protocol in
    http1 | h2c) start_larder_route "$larder" "$route_port" --node "127.0.0.1:$node_port" "$@" ;;
    h2)
        client_port=$(free_port)
        cat >"$work/tls.toml" <<TOML
[tls]
listen = "127.0.0.1:$client_port"
cert = "$root/crates/router/tests/tls/localhost.pem"
key = "$root/crates/router/tests/tls/localhost.key"
TOML
        start_larder_route "$larder" "$route_port" --node "127.0.0.1:$node_port" \
            --config "$work/tls.toml" "$@"
        wait_port "$client_port"
        ;;
    *)
        echo "PROTOCOL must be http1, h2c or h2" >&2
        return 1
        ;;
    esac
}
