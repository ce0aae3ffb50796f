#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time to first result of `prewarm run` in fresh processes, by cache state,
for several model x precision cases.

Google Benchmark repeats a function inside one process, which is exactly what
hides a cold start, so this driver starts a new process per sample:

  cold        empty POCL_CACHE_DIR, no program store: everything compiles
  installed   POCL_CACHE_DIR and the program store as one earlier run with
              empty caches left them (what `prewarm build` captures and
              `prewarm-runtime install` puts in place)
  driver      warm POCL_CACHE_DIR only (the driver's own cache), no store
  store       (optional) program store only, empty POCL_CACHE_DIR

Each sample gets its own copy of the filled caches, so no run sees another's
leftovers. Rounds interleave every case and mode so that load changes on a
shared machine hit all of them alike; --budget stops starting new rounds (the
rounds done are reported, never a partial one).

Two first-result numbers come from each report:
  first_result         wall time from the start of the workload to the first
                       checked forward pass: includes this synthetic engine's
                       host work (seeded weights, CPU references, checks)
  first_result_device  the device path of it, by construction: session open +
                       compile + execute up to that pass (what a real engine
                       that loads weights from disk would wait for)
Writes results-<label>.md, .csv, .json and first-result-<label>.png.
"""
import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DESCRIBE = {
    "cold": "empty POCL_CACHE_DIR, no store",
    "installed": "filled POCL_CACHE_DIR + program store",
    "driver": "filled POCL_CACHE_DIR only (warm driver cache)",
    "store": "program store only, empty POCL_CACHE_DIR",
}
FIELDS = ["case", "model", "precision", "mode", "run", "wall_seconds", "first_result_seconds",
          "first_result_device_seconds", "first_result_host_seconds", "session_open_seconds",
          "compile_seconds", "execute_seconds", "store_hits", "store_misses", "variants", "op_checks",
          "max_abs_error"]


def run_once(args, model, precision, pocl_dir, store_dir, installed_root=None):
    """pocl_dir: the driver cache dir (--cache-var); installed_root: run under
    `prewarm-runtime exec --root` instead, which sets the cache variables."""
    env = dict(os.environ)
    for var in ("POCL_CACHE_DIR", "CUDA_CACHE_PATH", "PREWARM_PROGRAM_STORE"):
        env.pop(var, None)
    if installed_root is None:
        env[args.cache_var] = str(pocl_dir)
        if args.cache_var == "CUDA_CACHE_PATH":
            env["CUDA_CACHE_DISABLE"] = "0"  # some images set it to 1
    cmd = [str(args.prewarm), "run", model, "--precision", precision, "--json",
           "--prefill", str(args.prefill), "--decode", str(args.decode)]
    if args.device:
        cmd += ["--device", args.device]
    if store_dir is not None:
        cmd += ["--store", str(store_dir)]
    if installed_root is not None:
        cmd = [str(args.runtime), "exec", "--root", str(installed_root), "--"] + cmd
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"run_bench: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return wall, json.loads(proc.stdout)


def sample_row(case, model, precision, mode, i, wall, report):
    s = report["seconds"]
    return {
        "case": case, "model": model, "precision": precision, "mode": mode, "run": i, "wall_seconds": wall,
        "first_result_seconds": s["first_result"],
        "first_result_device_seconds": s["first_result_device"],
        "first_result_host_seconds": s["first_result_host"],
        "session_open_seconds": s["session_open"],
        "compile_seconds": s["compile"], "execute_seconds": s["execute"],
        "store_hits": report["program_store"]["hits"], "store_misses": report["program_store"]["misses"],
        "variants": len(report["variants"]), "op_checks": report["accuracy"]["op_checks"],
        "max_abs_error": report["accuracy"]["max_abs_error"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prewarm", required=True, help="path to the prewarm executable")
    parser.add_argument("--runs", type=int, default=3, help="rounds at most (default 3)")
    parser.add_argument("--budget", type=float, default=0, help="seconds: start no new round after this (0 = none)")
    parser.add_argument("--cases", default="qwen2.5-0.5b:fp32",
                        help="comma-separated model:precision list; a case model:precision:N runs in the first N rounds only")
    parser.add_argument("--modes", default="cold,installed,driver")
    parser.add_argument("--prefill", type=int, default=16)
    parser.add_argument("--decode", type=int, default=2)
    parser.add_argument("--device", default="")
    parser.add_argument("--cache-var", default="POCL_CACHE_DIR",
                        help="the driver cache variable: POCL_CACHE_DIR (PoCL) or CUDA_CACHE_PATH (NVIDIA)")
    parser.add_argument("--installed-roots", help="JSON file {\"MODEL PRECISION\": ROOT}: the installed mode copies ROOT"
                        " (what `prewarm-runtime install` of a `prewarm build` bundle made) and runs under"
                        " `RUNTIME exec --root COPY`; without it, installed = the fill run's driver cache + store")
    parser.add_argument("--runtime", default="prewarm-runtime", help="prewarm-runtime executable (--installed-roots)")
    parser.add_argument("--label", default="pocl", help="device label in the output file names")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent), help="output directory")
    parser.add_argument("--from-csv", help="re-render the report and plot from a results CSV, run nothing")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.from_csv:
        rows = load_csv(args.from_csv)
        meta_path = out / f"results-{args.label}.json"
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        render(args, out, rows, meta)
        return

    modes = args.modes.split(",")
    cases = []
    for spec in args.cases.split(","):
        parts = spec.split(":")
        cases.append((parts[0], parts[1], int(parts[2]) if len(parts) > 2 else args.runs))
    rows = []
    fills = {}
    roots = json.loads(Path(args.installed_roots).read_text()) if args.installed_roots else {}
    load_before = os.getloadavg()
    started = time.perf_counter()
    device = ""
    with tempfile.TemporaryDirectory(prefix="prewarm-bench-") as tmp:
        work = Path(tmp)
        for model, precision, _ in cases:
            # One run with empty caches and a store: what a `prewarm build` leaves.
            case = f"{model} {precision}"
            base = work / f"fill-{model}-{precision}"
            (base / "pocl").mkdir(parents=True)
            _, report = run_once(args, model, precision, base / "pocl", base / "store")
            device = report["device"]["description"]
            fills[case] = base
            print(f"filled {case}: {len(report['variants'])} variants", file=sys.stderr)
        for i in range(args.runs):
            if args.budget and i > 0 and time.perf_counter() - started > args.budget:
                print(f"run_bench: budget of {args.budget:.0f} s spent after {i} rounds", file=sys.stderr)
                break
            for model, precision, case_runs in cases:
                if i >= case_runs:
                    continue
                case = f"{model} {precision}"
                for mode in modes:
                    sample = work / f"sample-{i}-{mode}"
                    pocl = sample / "pocl"
                    store = None
                    root = None
                    if mode == "installed" and case in roots:
                        root = sample / "root"
                        shutil.copytree(roots[case], root, symlinks=True)
                    elif mode in ("installed", "driver"):
                        shutil.copytree(fills[case] / "pocl", pocl)
                    else:
                        pocl.mkdir(parents=True)
                    if mode == "store" or (mode == "installed" and root is None):
                        store = sample / "store"
                        shutil.copytree(fills[case] / "store", store)
                    wall, report = run_once(args, model, precision, pocl, store, root)
                    row = sample_row(case, model, precision, mode, i, wall, report)
                    rows.append(row)
                    print(f"{case:20s} {mode:9s} run {i}: first result {row['first_result_seconds']:.3f} s, "
                          f"device {row['first_result_device_seconds']:.3f} s, wall {wall:.3f} s, "
                          f"store hits {row['store_hits']}", file=sys.stderr)
                    shutil.rmtree(sample)
    meta = {"device": device, "cache_var": args.cache_var,
            "installed": "prewarm build -> prewarm-runtime install -> exec" if roots else "fill run's driver cache + program store",
            "host": platform.node(), "cpus": os.cpu_count(), "load_before": load_before,
            "load_after": os.getloadavg(), "prefill": args.prefill, "decode": args.decode,
            "bench_seconds": time.perf_counter() - started}
    (out / f"results-{args.label}.json").write_text(json.dumps(meta, indent=2) + "\n")
    with open(out / f"results-{args.label}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    render(args, out, rows, meta)


def load_csv(path):
    rows = []
    with open(path) as f:
        for row in csv.DictReader(f):
            for k, v in row.items():
                if k not in ("case", "model", "precision", "mode"):
                    row[k] = float(v) if v not in ("", None) else float("nan")
            rows.append(row)
    return rows


def render(args, out, rows, meta):
    label = args.label
    cases = list(dict.fromkeys(r["case"] for r in rows))
    modes = [m for m in ("cold", "installed", "driver", "store") if any(r["mode"] == m for r in rows)]

    def vals(case, mode, key):
        return [r[key] for r in rows if r["case"] == case and r["mode"] == mode]

    def med(case, mode, key):
        v = vals(case, mode, key)
        return statistics.median(v) if v else float("nan")

    def cell(case, mode, key):
        v = vals(case, mode, key)
        return f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})" if v else "-"

    def ratio(a, b):
        return f"{a / b:.2f}x" if b and b == b and a == a else "-"

    lb, la = meta.get("load_before", [0]), meta.get("load_after", [0])
    lines = [
        f"# Time to first result, {label}",
        "",
        f"`prewarm run MODEL --precision P --prefill {meta.get('prefill', args.prefill)} --decode {meta.get('decode', args.decode)}`"
        f" in fresh processes, modes interleaved round by round, on {meta.get('device', '?')}.",
        f"Host: {meta.get('host', '?')}, {meta.get('cpus', '?')} CPUs, load average {lb[0]:.1f} before and {la[0]:.1f} after"
        f" (shared machine: absolute numbers move with the load, ratios less); bench took"
        f" {meta.get('bench_seconds', 0) / 60:.1f} min.",
        "",
        "- **first result (device)** = `seconds.first_result_device`: session open + compile + execute up to the end of"
        " the first forward pass, measured by construction inside the Session (program builds, kernel creation,"
        " enqueue, finish, transfers; PoCL's per-local-size code generation at the first enqueue included). This is"
        " what a real engine, which loads weights from disk and runs no CPU reference, waits for.",
        "- **first result (all)** = `seconds.first_result`: the same pass in wall time, including this synthetic"
        " engine's host work (seeded weight generation, CPU references, comparisons) = `seconds.first_result_host`."
        " Every op output is still checked in every run.",
        f"- driver cache variable: {meta.get('cache_var', 'POCL_CACHE_DIR')}; installed ="
        f" {meta.get('installed', 'driver cache + program store')}; driver = warm driver cache only, no store.",
        "- cold/installed: how much the installed bundle saves; installed/driver: the goal is <= 1.1x (the bundle"
        " removes the compile stall as fully as an already warm driver cache).",
        "",
        "| case | mode | n | first result device, s median (min-max) | first result all, s | host work, s | compile, s | execute, s | store hits | wall, s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in cases:
        for mode in modes:
            n = len(vals(case, mode, "wall_seconds"))
            if not n:
                continue
            lines.append(f"| {case} | {mode} | {n} | {cell(case, mode, 'first_result_device_seconds')} |"
                         f" {med(case, mode, 'first_result_seconds'):.3f} | {med(case, mode, 'first_result_host_seconds'):.3f} |"
                         f" {med(case, mode, 'compile_seconds'):.3f} | {med(case, mode, 'execute_seconds'):.3f} |"
                         f" {int(med(case, mode, 'store_hits'))} | {med(case, mode, 'wall_seconds'):.3f} |")
    lines += ["", "Ratios of medians: first three columns on the device path, then on the first result with host work and on the process wall:", "",
              "| case | variants | cold/installed | installed/driver (goal <= 1.1x) | cold/installed (all) | installed/driver (all) | cold/installed (wall) |",
              "|---|---|---|---|---|---|---|"]
    for case in cases:
        d = lambda m: med(case, m, "first_result_device_seconds")
        a = lambda m: med(case, m, "first_result_seconds")
        w = lambda m: med(case, m, "wall_seconds")
        lines.append(f"| {case} | {int(med(case, 'cold', 'variants'))} | {ratio(d('cold'), d('installed'))} |"
                     f" {ratio(d('installed'), d('driver'))} | {ratio(a('cold'), a('installed'))} |"
                     f" {ratio(a('installed'), a('driver'))} | {ratio(w('cold'), w('installed'))} |")
    reproduce = ("`bench/first_result/gpu_first_result.sh` on the GPU machine (see its header)" if label == "gpu" else
                 "")
    lines += ["", f"Raw samples: results-{label}.csv. Plot: first-result-{label}.png.",
              f"Reproduce: {reproduce}" if reproduce else
              f"Reproduce: `/usr/bin/python3 bench/first_result/run_bench.py --prewarm BUILD/prewarm/cli/prewarm"
              f" --cases {','.join(c.replace(' ', ':') for c in cases)} --runs {args.runs}`;"
              f" re-render: `--from-csv results-{label}.csv --label {label}`.", ""]
    (out / f"results-{label}.md").write_text("\n".join(lines))
    plot(out, label, rows, cases, modes, vals)
    print((out / f"results-{label}.md").read_text())


def plot(out, label, rows, cases, modes, vals):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("run_bench: no matplotlib in this python (Debian: /usr/bin/python3 with python3-matplotlib); no plot",
              file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(cases)), 4.5))
    width = 0.8 / len(modes)
    for j, mode in enumerate(modes):
        meds, lows, highs = [], [], []
        for case in cases:
            v = vals(case, mode, "first_result_device_seconds") or [float("nan")]
            m = statistics.median(v)
            meds.append(m)
            lows.append(m - min(v))
            highs.append(max(v) - m)
        xs = [i + (j - (len(modes) - 1) / 2) * width for i in range(len(cases))]
        ax.bar(xs, meds, width=width, yerr=[lows, highs], capsize=3, label=f"{mode} ({DESCRIBE.get(mode, mode)})")
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([c.replace(" ", "\n") for c in cases], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("first result, device path, s (median, min-max; log)")
    ax.set_title(f"prewarm run: time to first result by cache state, {label}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / f"first-result-{label}.png", dpi=120)


if __name__ == "__main__":
    main()
