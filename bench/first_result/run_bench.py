#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time to first result of `prewarm run` in fresh processes, by cache state.

Google Benchmark repeats a function inside one process, which is exactly what
hides a cold start, so this driver starts a new process per sample:

  cold        empty POCL_CACHE_DIR, no program store: everything compiles
  installed   POCL_CACHE_DIR and the program store as a previous run left
              them (what `prewarm-runtime install` puts in place)
  driver      warm POCL_CACHE_DIR only (the driver's own cache), no store
  store       program store only, empty POCL_CACHE_DIR: binaries the store
              serves, captured after the kernels ran

Each sample gets its own copy of the filled caches, so no run sees another's
leftovers. Reports medians (and min/max) of the report's first_result_seconds
and of the process wall time, plus ratios against cold, into results-<dev>.md,
results-<dev>.csv and first-result-<dev>.png.
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

MODES = ["cold", "installed", "driver", "store"]


def run_once(prewarm, args, pocl_dir, store_dir):
    env = dict(os.environ)
    env["POCL_CACHE_DIR"] = str(pocl_dir)
    env.pop("PREWARM_PROGRAM_STORE", None)
    cmd = [str(prewarm), "run", args.model, "--precision", args.precision, "--json",
           "--prefill", str(args.prefill), "--decode", str(args.decode)]
    if args.device:
        cmd += ["--device", args.device]
    if store_dir is not None:
        cmd += ["--store", str(store_dir)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"run_bench: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    report = json.loads(proc.stdout)
    return wall, report


def fill(prewarm, args, work):
    """One run with empty caches and a store: what a `prewarm build` leaves."""
    pocl = work / "filled-pocl"
    store = work / "filled-store"
    pocl.mkdir()
    _, report = run_once(prewarm, args, pocl, store)
    return pocl, store, report


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prewarm", required=True, help="path to the prewarm executable")
    parser.add_argument("--runs", type=int, default=5, help="samples per mode (default 5)")
    parser.add_argument("--model", default="qwen2.5-0.5b")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--prefill", type=int, default=16)
    parser.add_argument("--decode", type=int, default=2)
    parser.add_argument("--device", default="")
    parser.add_argument("--label", default="pocl", help="device label in the output file names")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent), help="output directory")
    parser.add_argument("--from-csv", help="re-render the report and plot from a results CSV, run nothing")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.from_csv:
        samples = {m: [] for m in MODES}
        with open(args.from_csv) as f:
            for row in csv.DictReader(f):
                samples[row["mode"]].append({k: (v if k == "mode" else float(v)) for k, v in row.items()})
        meta = json.loads((out / f"results-{args.label}.json").read_text())
        render(args, out, samples, meta["device"], tuple(meta["load_before"]), tuple(meta["load_after"]))
        return
    samples = {m: [] for m in MODES}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="prewarm-bench-") as tmp:
        work = Path(tmp)
        filled_pocl, filled_store, fill_report = fill(args.prewarm, args, work)
        device = fill_report["device"]["description"]
        for i in range(args.runs):
            # Interleave the modes so that load changes on a shared machine
            # hit all of them alike.
            for mode in MODES:
                sample = work / f"{mode}-{i}"
                pocl = sample / "pocl"
                store = None
                if mode in ("installed", "driver"):
                    shutil.copytree(filled_pocl, pocl)
                else:
                    pocl.mkdir(parents=True)
                if mode in ("installed", "store"):
                    store = sample / "store"
                    shutil.copytree(filled_store, store)
                wall, report = run_once(args.prewarm, args, pocl, store)
                store_counts = report["program_store"]
                samples[mode].append({
                    "mode": mode, "run": i, "wall_seconds": wall,
                    "first_result_seconds": report["seconds"]["first_result"],
                    "compile_seconds": report["seconds"]["compile"],
                    "execute_seconds": report["seconds"]["execute"],
                    "store_hits": store_counts["hits"], "store_misses": store_counts["misses"],
                    "max_abs_error": report["accuracy"]["max_abs_error"],
                })
                print(f"{mode:9s} run {i}: first result {report['seconds']['first_result']:.3f} s, "
                      f"wall {wall:.3f} s, store hits {store_counts['hits']}", file=sys.stderr)
                shutil.rmtree(sample)
    load_after = os.getloadavg()
    (out / f"results-{args.label}.json").write_text(json.dumps(
        {"device": device, "load_before": load_before, "load_after": load_after}, indent=2) + "\n")
    with open(out / f"results-{args.label}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(samples["cold"][0].keys()))
        writer.writeheader()
        for mode in MODES:
            writer.writerows(samples[mode])
    render(args, out, samples, device, load_before, load_after)


def render(args, out, samples, device, load_before, load_after):
    label = args.label

    def med(mode, key):
        return statistics.median(s[key] for s in samples[mode])

    def span(mode, key):
        values = [s[key] for s in samples[mode]]
        return min(values), max(values)

    cold_first = med("cold", "first_result_seconds")
    cold_wall = med("cold", "wall_seconds")
    lines = [
        f"# Time to first result, {label}",
        "",
        f"`prewarm run {args.model} --precision {args.precision} --prefill {args.prefill} --decode {args.decode}`,"
        f" {args.runs} fresh processes per mode (modes interleaved), on {device}.",
        f"Host: {platform.node()}, {os.cpu_count()} CPUs, load average {load_before[0]:.1f} before and"
        f" {load_after[0]:.1f} after (the machine is shared: absolute numbers move with the load,"
        " ratios less).",
        "",
        "first result = the report's `first_result_seconds`: from the start of the workload (before the device"
        " is opened) to the end of the first forward pass (prefill + decode steps), every op output in it checked"
        " against its CPU reference, so the reference's time is part of every mode's number. wall = the whole"
        " process. compile = program builds and kernel creation (PoCL also compiles per local size at the"
        " first enqueue, which lands in execute time, not here).",
        "",
        "| mode | caches | first result median (min-max) | vs cold | wall median (min-max) | vs cold | compile median | execute median | store hits |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    describe = {
        "cold": "empty POCL_CACHE_DIR, no store",
        "installed": "filled POCL_CACHE_DIR + program store",
        "driver": "filled POCL_CACHE_DIR only",
        "store": "program store only, empty POCL_CACHE_DIR",
    }
    for mode in MODES:
        fmin, fmax = span(mode, "first_result_seconds")
        wmin, wmax = span(mode, "wall_seconds")
        lines.append(
            f"| {mode} | {describe[mode]} | {med(mode, 'first_result_seconds'):.3f} s ({fmin:.3f}-{fmax:.3f}) |"
            f" {cold_first / med(mode, 'first_result_seconds'):.1f}x |"
            f" {med(mode, 'wall_seconds'):.3f} s ({wmin:.3f}-{wmax:.3f}) | {cold_wall / med(mode, 'wall_seconds'):.1f}x |"
            f" {med(mode, 'compile_seconds'):.3f} s | {med(mode, 'execute_seconds'):.3f} s | {int(med(mode, 'store_hits'))} |")
    rest = med("installed", "first_result_seconds") - med("installed", "compile_seconds") - med("installed", "execute_seconds")
    lines += ["",
              "execute = enqueue, finish and transfers; cold it includes PoCL's per-local-size code generation at the"
              f" first enqueue ({med('cold', 'execute_seconds'):.1f} s cold vs {med('installed', 'execute_seconds'):.1f} s"
              " installed). What is left of a warm first result"
              f" (installed: {rest:.1f} s) is host work: generating the seeded weights and the CPU reference checks of every op (uploads count as execute).",
              ]
    lines += ["", f"Raw samples: results-{label}.csv. Plot: first-result-{label}.png.",
              f"Reproduce: `/usr/bin/python3 bench/first_result/run_bench.py --prewarm build/prewarm/cli/prewarm --runs {args.runs}`", ""]
    (out / f"results-{label}.md").write_text("\n".join(lines))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        xs = range(len(MODES))
        for offset, key, name in ((-0.2, "first_result_seconds", "first result"), (0.2, "wall_seconds", "process wall")):
            meds = [med(m, key) for m in MODES]
            lows = [meds[i] - span(m, key)[0] for i, m in enumerate(MODES)]
            highs = [span(m, key)[1] - meds[i] for i, m in enumerate(MODES)]
            ax.bar([x + offset for x in xs], meds, width=0.4, yerr=[lows, highs], capsize=4, label=name)
        ax.set_xticks(list(xs))
        short = {"cold": "no caches", "installed": "POCL cache + store", "driver": "POCL cache", "store": "store only"}
        ax.set_xticklabels([f"{m}\n({short[m]})" for m in MODES], fontsize=8)
        ax.set_ylabel("seconds (median, min-max)")
        ax.set_title(f"prewarm run {args.model} {args.precision}: {label}, {args.runs} processes/mode")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"first-result-{label}.png", dpi=120)
    except ImportError:
        print("run_bench: no matplotlib in this python (Debian: /usr/bin/python3 with python3-matplotlib); no plot",
              file=sys.stderr)
    print((out / f"results-{label}.md").read_text())


if __name__ == "__main__":
    main()
