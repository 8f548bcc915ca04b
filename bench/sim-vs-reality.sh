#!/usr/bin/env bash
# Simulator vs reality (issue 6, item 4): does `larder sim`, with a cost model fitted to
# this machine, predict what `larder bench experiment locality` measured: each policy's
# aggregate hit ratio, and its throughput as a multiple of wrr's, within 20%?
#
#   bash bench/sim-vs-reality.sh [DIR]     # DIR: an experiment's output (rows.json,
#                                          # table.md); default bench/results/experiments/locality
#
# For every workload it can model (dynamic-uniform, dynamic-zipf, static-uniform,
# static-zipf) and every round, it runs `larder sim` on the same shape as the experiment
# and prints, per larder route policy (HAProxy and nginx rows are not simulated), the
# measured and simulated hit ratio and throughput ratio to wrr, and whether each is
# within 20%; the tables also go to DIR/sim-vs-reality.md, next to the experiment's own.
#
# The same shape: 4 nodes with the caches table.md names (16/16/8/8 MiB), LRU, the same
# generated request stream (same generator, seed 1, 1,000,000 requests: 576 views of
# 64 KiB, or 2304 files of 16 KiB, 36 MiB = 3/4 of all caches; uniform or Zipf 0.8),
# targets keyed as larder route keys their URLs (tree depth 3, as the experiment
# configures the router; dynamic URLs are larder node's /app/db<v/64>/v<v%64>/d<k>, one
# target per view), and as many requests in flight as the experiment had users. These
# are experiment.rs's defaults; a run made with other flags needs the same settings here:
# DATASET_MB, ALPHA, SEED, FILE_SIZE, VIEW_SIZE, USERS, CACHE_MB (comma list).
#
# The fit (per workload and round, from rows.json alone; printed above each table):
# - Cores. Every process of the experiment (4 nodes, the router, the load generator) runs
#   on the same cores, and other work on the machine takes some of them. So the model is
#   one machine: `--shared-cpus N` (N = the CPUs table.md names) with every CPU cost
#   scaled by N / C, where C, the cores the experiment actually got, is the median over
#   the round's rows of throughput × (router + nodes + client CPU per request).
# - Nodes. CPU per request of the nodes = hit cost + (1 − hit ratio) × miss cost, a
#   least-squares line through the round's rows (policies with hit ratios from 0.33 to
#   0.98 pin both ends). The hit cost runs on the node's event loop (half at set-up, half
#   at send, so a miss pays it too); the miss cost runs on the node's one helper thread
#   (`--miss-cpu-us`: the view's computation on `--cpu-threads 1`, or reading a file in),
#   so a node cannot compute more than one core's worth of misses, as in reality.
# - Front. The router's and load generator's CPU per request (median over the round's
#   rows) is a job on the shared cores before the request reaches its node
#   (`--front-us`); it takes cores from the nodes exactly as on the real machine.
# - Disk (static). An O_DIRECT 16 KiB read takes DISK_US µs (default: the mean in
#   ../disk.txt that bench/experiments.sh's `disk` part measures, else 55 µs, measured
#   here); it is far from limiting (the rows never need more than ~10,000 reads/s).
# Measured figures are per round (a ratio is to wrr in the same round, since every round
# starts fresh nodes on a machine whose load moves); the table shows the median over
# rounds (the mean of the middle two for an even count) and each round's value.
#
# Settings (environment): LARDER (a release binary; built if unset), REQUESTS (1000000),
# DISK_US, and the shape settings above.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

DIR=${1:-$ROOT/bench/results/experiments/locality}
if [ ! -f "$DIR/rows.json" ]; then
    echo "no rows.json in $DIR: run bench/experiments.sh (or larder bench experiment) first" >&2
    exit 2
fi
if [ -z "${DISK_US:-}" ] && [ -f "$DIR/../disk.txt" ]; then
    DISK_US=$(grep -o 'mean [0-9.]* us' "$DIR/../disk.txt" | head -1 | cut -d' ' -f2)
fi
LARDER=$(larder_binary "$ROOT")
export LARDER DISK_US=${DISK_US:-55}

python3 - "$DIR" <<'PY'
import json, os, re, statistics, subprocess, sys, tempfile

out_dir = sys.argv[1]
larder = os.environ["LARDER"]
env = os.environ.get
rows = json.load(open(os.path.join(out_dir, "rows.json")))
header = open(os.path.join(out_dir, "table.md")).read() if os.path.exists(
    os.path.join(out_dir, "table.md")) else ""

def from_header(pattern, default):
    m = re.search(pattern, header)
    return m.group(1) if m else default

cpus = int(from_header(r"machine: (\d+) CPUs", str(os.cpu_count() or 2)))
cache_mb = env("CACHE_MB") or from_header(r"caches ([\d/]+) MiB", "16/16/8/8").replace("/", ",")
users = int(env("USERS") or from_header(r"(\d+) users", "32"))
dataset_mb = float(env("DATASET_MB") or sum(float(c) for c in cache_mb.split(",")) * 3 / 4)
alpha = env("ALPHA", "0.8")
seed = env("SEED", "1")
file_size = env("FILE_SIZE", "16KiB")
view_size = env("VIEW_SIZE", "64KiB")
requests = env("REQUESTS", "1000000")
disk_us = float(env("DISK_US"))
views_per_db = 64  # experiment/workload.rs: VIEWS_PER_DB
anchors = {"haproxy", "nginx"}
tolerance = 0.2

def size_bytes(s):
    m = re.fullmatch(r"(\d+)\s*([KMG]i?B)?", s.strip())
    if not m:
        sys.exit(f"cannot read size {s!r}")
    unit = {None: 1, "KiB": 1 << 10, "KB": 1 << 10, "MiB": 1 << 20, "MB": 1 << 20,
            "GiB": 1 << 30, "GB": 1 << 30}[m.group(2)]
    return int(m.group(1)) * unit

def median(v):
    return statistics.median(v) if v else float("nan")

def fit_line(points):
    """Least squares y = a + b·x over (x, y) points."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx < 1e-6:
        return None
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - b * mx, b

def within(sim, meas):
    return abs(sim / meas - 1) <= tolerance if meas > 0 and sim == sim and meas == meas else False

def fit(round_rows):
    """The round's cost model (µs, real cores) from its measured rows."""
    line = fit_line([(1 - r["hit_ratio"], r["cpu_us_nodes"]) for r in round_rows])
    if line is None:
        return None
    hit_us, miss_us = max(line[0], 1.0), max(line[1], 0.0)
    front_us = median([r["cpu_us_front"] + r["cpu_us_client"] for r in round_rows])
    cores = median([r["throughput_rps"] * (r["cpu_us_front"] + r["cpu_us_nodes"]
                    + r["cpu_us_client"]) / 1e6 for r in round_rows])
    return {"hit_us": hit_us, "miss_us": miss_us, "front_us": front_us, "cores": cores}

def simulate(workload, policies, model, urls_file):
    dynamic = workload.startswith("dynamic")
    scale = cpus / model["cores"]
    args = [larder, "sim", "--json", "--gen", "zipf" if workload.endswith("zipf") else "uniform",
            "--alpha", alpha, "--seed", seed, "--requests", requests,
            "--dataset-mb", str(dataset_mb),
            "--sizes", f"fixed:{view_size if dynamic else file_size}",
            "--cache-mb", cache_mb, "--cache", "lru", "--policy", ",".join(policies),
            "--max-in-flight", str(users), "--shared-cpus", str(cpus),
            "--route-keys", "--tree-depth", "3",
            "--setup-us", str(model["hit_us"] / 2 * scale),
            "--teardown-us", str(model["hit_us"] / 2 * scale), "--transmit-us", "0",
            "--miss-cpu-us", str(model["miss_us"] * scale),
            "--front-us", str(model["front_us"] * scale),
            "--disk-read-ms", "0" if dynamic else str(disk_us / 1000),
            "--disk-block-us", "0", "--disk-chunk-ms", "0"]
    if dynamic:
        args += ["--target-urls", urls_file]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"larder sim failed: {done.stderr.strip()}")
    return {r["policy"]: r for r in map(json.loads, done.stdout.splitlines())}

def cell(v, fmt="{:.3f}"):
    return fmt.format(v) if v == v else "–"

with tempfile.TemporaryDirectory() as tmp:
    urls_file = os.path.join(tmp, "views.txt")
    views = int(dataset_mb * (1 << 20)) // size_bytes(view_size)
    with open(urls_file, "w") as f:
        for v in range(views):
            f.write(f"/app/db{v // views_per_db}/v{v % views_per_db}/d0?OpenDocument\n")

    report = [f"# Simulator vs reality: {out_dir}", "",
              f"`larder sim` fitted to the measured rows (bench/sim-vs-reality.sh explains "
              f"the fit): {cpus} shared CPUs, caches {cache_mb.replace(',', '/')} MiB (LRU), "
              f"{users} requests in flight, data set {dataset_mb:g} MiB, Zipf alpha {alpha}, "
              f"seed {seed}, {requests} requests; static disk read {disk_us:g} µs. "
              f"A figure is within {tolerance:.0%} when |simulated / measured − 1| ≤ {tolerance}.",
              ""]
    verdicts = []
    groups = {}
    for r in rows:
        if r["system"] in anchors:
            continue
        groups.setdefault((r["workload"], r["connections"]), []).append(r)
    for (workload, connections), group in groups.items():
        if workload not in ("dynamic-uniform", "dynamic-zipf", "static-uniform", "static-zipf"):
            print(f"skipping {workload}: not a generated workload the simulator can rebuild")
            continue
        rounds = sorted({r["round"] for r in group})
        measured, simulated, fits = {}, {}, []
        for rnd in rounds:
            rr = [r for r in group if r["round"] == rnd]
            model = fit(rr)
            if model is None or "wrr" not in {r["system"] for r in rr}:
                print(f"skipping {workload} round {rnd + 1}: needs wrr and rows of "
                      f"different hit ratios")
                continue
            fits.append((rnd, model))
            sims = simulate(workload, [r["system"] for r in rr], model, urls_file)
            wrr = next(r for r in rr if r["system"] == "wrr")
            for r in rr:
                s = sims[r["system"]]
                measured.setdefault(r["system"], []).append(
                    (r["hit_ratio"], r["throughput_rps"] / wrr["throughput_rps"]))
                simulated.setdefault(r["system"], []).append(
                    (s["hit_ratio"], s["throughput_rps"] / sims["wrr"]["throughput_rps"]))
        if not fits:
            continue
        report += [f"## {workload}, {connections}", ""]
        for rnd, m in fits:
            report.append(
                f"- fit, round {rnd + 1}: node CPU per request {m['hit_us']:.0f} µs + "
                f"(1 − hit ratio) × {m['miss_us']:.0f} µs; router + load generator "
                f"{m['front_us']:.0f} µs per request; the experiment got {m['cores']:.2f} "
                f"of {cpus} cores (CPU costs × {cpus / m['cores']:.2f} in the simulator)")
        report += ["", "| policy | hit measured | hit simulated | within 20% | × wrr measured "
                   "| × wrr simulated | within 20% | rounds: measured · simulated × wrr |",
                   "|---|---:|---:|---|---:|---:|---|---|"]
        for policy, meas in measured.items():
            sim = simulated[policy]
            mh, mt = median([m[0] for m in meas]), median([m[1] for m in meas])
            sh, st = median([s[0] for s in sim]), median([s[1] for s in sim])
            ok_h, ok_t = within(sh, mh), within(st, mt)
            per_round = " / ".join(f"{m[1]:.2f} · {s[1]:.2f}" for m, s in zip(meas, sim))
            report.append(
                f"| {policy} | {cell(mh)} | {cell(sh)} | {'yes' if ok_h else 'NO'} | "
                f"{cell(mt, '{:.2f}')} | {cell(st, '{:.2f}')} | "
                f"{'–' if policy == 'wrr' else ('yes' if ok_t else 'NO')} | {per_round} |")
            if policy != "wrr":
                verdicts.append(ok_t)
            verdicts.append(ok_h)
        report.append("")
    held = sum(verdicts)
    report.append(f"{held} of {len(verdicts)} figures within {tolerance:.0%}.")
    text = "\n".join(report) + "\n"
    print(text, end="")
    with open(os.path.join(out_dir, "sim-vs-reality.md"), "w") as f:
        f.write(text)
    print(f"wrote {os.path.join(out_dir, 'sim-vs-reality.md')}")
PY
