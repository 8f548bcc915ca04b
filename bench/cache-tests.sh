#!/usr/bin/env bash
# The HTTP cache-tests suite (cache-tests.fyi) against larder node (directly and through
# larder route), Varnish and nginx proxy_cache, scored by the suite's own rules.
#
# The suite (../shared/cache-tests, read-only) is copied to a temporary directory, its
# dependencies installed there with npm (`npm i --omit=dev`), its origin started on a free
# loopback port (`npm run server`), and its client run unmodified against each cache
# (`npm run --silent cli --base=...`). The client configures every test with a PUT sent
# through the cache under test, so a cache that does not pass PUT to its origin fails
# those tests' setup. Each system's JSON results are scored by a small node script that
# imports the suite's `test-engine/lib/results.mjs` (`determineTestResult`: dependencies,
# setup failures, required / optimal / check kinds); then a table is printed, and the
# required tests larder (direct) does not pass, each with the suite's verdict and message.
#
# The caches under test:
# - larder node --origin http://127.0.0.1:SUITE --origin-default-ttl 0 (one thread);
# - larder route --node (that node), in front of it;
# - Varnish (Debian) with its built-in VCL, the suite's origin as backend, default_ttl=0;
# - larder-bypass (a diagnostic row, not the suite's verdict on larder): the same larder
#   node behind a pass-through nginx (no cache; origin Date and Server kept) that sends the
#   suite's configuration PUTs (/config/) straight to the suite's origin, everything else
#   to larder, so the tests' caching is measured while larder cannot pass PUT yet;
# - nginx (Debian): proxy_cache with no proxy_cache_valid, so only responses whose
#   Cache-Control or Expires allow it are stored (the suite's copy does not document the
#   configuration behind its published nginx results).
#
# Settings (environment): SUITE (the suite's folder; ../shared/cache-tests beside the
# repository), SYSTEMS (which to run, default "larder route larder-bypass varnish
# nginx"), LARDER (a
# larder binary; a release build of this checkout if unset), KEEP (a folder to copy each
# system's raw JSON results to), LARDER_FLAGS (more `larder node` flags).
# Installs varnish and nginx with apt-get when missing. Touches only loopback; everything
# it started is stopped and its temporary folder removed on exit, also on failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SUITE=${SUITE:-$ROOT/../shared/cache-tests}
SYSTEMS=${SYSTEMS:-larder route larder-bypass varnish nginx}
LARDER_FLAGS=${LARDER_FLAGS:-}

. "$ROOT/bench/lib.sh"
ensure_tools node npm varnishd:varnish nginx
[ -d "$SUITE/test-engine" ] || { echo "no cache-tests suite at $SUITE" >&2; exit 1; }
LARDER_GIVEN=${LARDER:-}
LARDER=$(larder_binary "$ROOT")

start_work
# Kill what a pid file names (nginx and the suite's node server write theirs), on top of
# the processes start_work's trap stops.
pidfiles=()
stop_all() {
    local f
    for f in "${pidfiles[@]}"; do
        [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
    stop_work
}
trap stop_all EXIT

cp -r "$SUITE" "$work/suite"
chmod -R u+w "$work/suite"
(cd "$work/suite" && npm i --omit=dev --no-audit --no-fund --silent >"$work/npm.log" 2>&1) || {
    cat "$work/npm.log" >&2
    exit 1
}

suite_port=$(free_port)
pidfiles+=("$work/suite-server.pid")
(cd "$work/suite" && exec npm run server --port="$suite_port" \
    --pidfile="$work/suite-server.pid" >"$work/suite-server.log" 2>&1) &
pids+=($!)
wait_port "$suite_port"
origin="http://127.0.0.1:$suite_port"

# run_client NAME PORT: the suite's client against 127.0.0.1:PORT, its JSON in NAME.json.
run_client() {
    echo "running the suite against $1 (port $2)" >&2
    (cd "$work/suite" && npm run --silent cli --base="http://127.0.0.1:$2") \
        >"$work/$1.json" 2>"$work/$1.err" || {
        echo "the suite's client failed against $1:" >&2
        tail -5 "$work/$1.err" >&2
        echo '{}' >"$work/$1.json"
    }
    if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$work/$1.json" "$KEEP/"; fi
    # The client reports on stderr each configuration PUT the cache did not pass on.
    local refused
    refused=$(grep -c "PUT config resulted in" "$work/$1.err" || true)
    if [ "$refused" -gt 0 ]; then
        echo "$1: $refused configuration PUTs refused, most as:" \
            "$(grep -o 'PUT config resulted in [0-9]* [A-Za-z ]*' "$work/$1.err" |
                sort | uniq -c | sort -rn | head -1 | sed 's/^ *[0-9]* //; s/ *$//')" >>"$work/notes"
    fi
}

# stop PID: end one process this script started and wait for it.
stop() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# start_nginx PORT NAME: nginx on 127.0.0.1:PORT, in $work/NAME, with one server whose
# locations are read from standard input (a cache zone "suite" is declared); sets $npid.
start_nginx() {
    local dir=$work/$2
    # nginx's workers run as nobody: they need to reach the cache and temporary files.
    mkdir -p "$dir"
    chmod 755 "$work"
    chmod 777 "$dir"
    {
        nginx_conf_head "$dir" 1024
        echo "    proxy_cache_path $dir/cache levels=1:2 keys_zone=suite:10m;"
        echo "    server {"
        echo "        listen 127.0.0.1:$1;"
        cat
        echo "    }"
        echo "}"
    } >"$dir/nginx.conf"
    pidfiles+=("$dir/nginx.pid")
    "$(tool_path nginx)" -c "$dir/nginx.conf" -p "$dir" 2>>"$dir/stderr" &
    npid=$!
    pids+=("$npid")
    wait_port "$1"
}

results=()
node_port=
for system in $SYSTEMS; do
    case $system in
    larder | route | larder-bypass)
        node_port=$(free_port)
        # shellcheck disable=SC2086
        "$LARDER" node --listen "127.0.0.1:$node_port" --origin "$origin" \
            --origin-default-ttl 0 --threads 1 $LARDER_FLAGS 2>>"$work/node.err" &
        node_pid=$!
        pids+=("$node_pid")
        wait_port "$node_port"
        if [ "$system" = larder ]; then
            run_client larder "$node_port"
        elif [ "$system" = larder-bypass ]; then
            port=$(free_port)
            start_nginx "$port" bypass <<EOF
        location /config/ {
            proxy_pass $origin;
        }
        location / {
            proxy_pass http://127.0.0.1:$node_port;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass_header Date;
            proxy_pass_header Server;
            proxy_buffering off;
        }
EOF
            run_client larder-bypass "$port"
            stop "$npid"
        else
            route_port=$(free_port)
            start_larder_route "$LARDER" "$route_port" --node "127.0.0.1:$node_port" \
                --threads 1
            run_client route "$route_port"
            stop "$router"
        fi
        stop "$node_pid"
        ;;
    varnish)
        port=$(free_port)
        "$(tool_path varnishd)" -F -j none -n "$work/varnish" -a "127.0.0.1:$port" \
            -b "127.0.0.1:$suite_port" -p default_ttl=0 -s malloc,64m \
            >"$work/varnish.log" 2>&1 &
        vpid=$!
        pids+=("$vpid")
        wait_port "$port"
        run_client varnish "$port"
        stop "$vpid"
        ;;
    nginx)
        port=$(free_port)
        start_nginx "$port" nginx <<EOF
        location / {
            proxy_pass $origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache suite;
        }
EOF
        run_client nginx "$port"
        stop "$npid"
        ;;
    *)
        echo "unknown system $system (larder, route, varnish, nginx)" >&2
        exit 1
        ;;
    esac
    results+=("$system=$work/$system.json")
done

# Scoring by the suite's own rules: its results.mjs decides each test's verdict.
cat >"$work/suite/score.mjs" <<'EOF'
import fs from 'node:fs'
import tests from './tests/index.mjs'
import { determineTestResult, resultTypes } from './test-engine/lib/results.mjs'

const names = Object.fromEntries(Object.entries(resultTypes).map(([k, v]) => [v[2], k]))
const runs = process.argv.slice(2).map(a => {
  const i = a.indexOf('=')
  return [a.slice(0, i), JSON.parse(fs.readFileSync(a.slice(i + 1), 'utf8'))]
})
// The client skips browser-only tests against a shared cache: they are not counted.
const all = tests.flatMap(s => s.tests).filter(t => t.browser_only !== true)
const kindOf = t => t.kind || 'required'
const rows = []
for (const [name, results] of runs) {
  const count = { required: [0, 0], optimal: [0, 0] }
  const failed = []
  for (const t of all) {
    const kind = kindOf(t)
    if (!(kind in count)) continue
    const verdict = names[determineTestResult(tests, t.id, results)[2]]
    count[kind][1]++
    if (verdict === 'pass') count[kind][0]++
    else if (kind === 'required') {
      const r = results[t.id]
      const why = Array.isArray(r) ? `${r[0]}: ${r[1]}` : ''
      failed.push([t.id, verdict, why.replace(/\s+/g, ' ').slice(0, 160)])
    }
  }
  rows.push({ name, count, failed })
}
console.log('| system | required passed / total | optimal passed / total |')
console.log('|---|---|---|')
for (const r of rows) {
  const c = r.count
  console.log(`| ${r.name} | ${c.required[0]} / ${c.required[1]} | ${c.optimal[0]} / ${c.optimal[1]} |`)
}
// Larder's failures, one line each; a reason shared by more than 10 tests (a setup that
// cannot pass) is one line with the count.
for (const r of rows.filter(r => r.name.startsWith('larder') || r.name === 'route')) {
  console.log(`\nRequired tests ${r.name} does not pass (${r.failed.length}):\n`)
  // The suite's origin answers 409 to a test whose configuration PUT never reached it.
  const reason = why => why.replace(/status is 409, not \d+/, 'status is 409 (no test configuration)')
  const shared = {}
  for (const [, , why] of r.failed) shared[reason(why)] = (shared[reason(why)] || 0) + 1
  for (const [id, verdict, why] of r.failed) {
    if (shared[reason(why)] <= 10) console.log(`- ${id}: ${verdict}${why ? ' (' + why + ')' : ''}`)
  }
  for (const [why, n] of Object.entries(shared)) {
    if (n > 10) console.log(`- ${n} tests: setup_fail or dependency_fail (${why || 'no result'})`)
  }
}
EOF
echo "cache-tests $(date -u +%Y-%m-%d), checkout $(git -C "$ROOT" rev-parse --short HEAD)," \
    "larder ${LARDER_GIVEN:-built from the checkout}"
(cd "$work/suite" && node score.mjs "${results[@]}")
if [ -s "$work/notes" ]; then
    echo
    cat "$work/notes"
fi
