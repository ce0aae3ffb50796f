#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Cold vs prewarmed first result of the pyopencl warm-up on PoCL.

Each sample is a fresh process running manifests/examples/pyopencl_warmup.py
with pyopencl's own cache off (PYOPENCL_NO_CACHE=1):
  cold       an empty PoCL cache directory of its own
  installed  `prewarm-runtime exec --root ROOT` after `prewarm build` (command
             workload) and `prewarm-runtime install` into a fresh ROOT
  captured   (when the CLIs cannot build command workloads yet) the cache the
             command module captured, pointed at with POCL_CACHE_DIR
Runs alternate between modes so that load drifts on a shared machine hit both
alike. Reports medians of first_result_s (script start to the first checked
result) and of the process wall time, writes RESULTS/pyopencl_pocl.json and
.md, and a plot (.png) when matplotlib is there.

  bench/command/pyopencl_cold_vs_installed.py --runs 7 \
      --prewarm build/prewarm/cli/prewarm --runtime build/runtime/cli/prewarm-runtime \
      --capture build/tests/integration/command/command_capture
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent
SCRIPT = SOURCE / "manifests" / "examples" / "pyopencl_warmup.py"
PYTHON = "/usr/bin/python3"  # Debian's python3-pyopencl belongs to it


def run_once(argv, env):
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(map(str, argv))} failed ({proc.returncode}):\n{proc.stderr}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"first_result_s": report["first_result_s"], "wall_s": round(wall, 4), "device": report["device"]}


def base_env():
    env = dict(os.environ)
    env.update({"PYOPENCL_NO_CACHE": "1", "PYOPENCL_CTX": "0"})
    return env


def prepare_installed(args, scratch, precision):
    """bundle -> install; returns (argv prefix, env) or None when build cannot run commands."""
    keys = scratch / "keys"
    keys.mkdir()
    subprocess.run([args.prewarm, "keygen", "--out", str(keys / "test_only_bench")], check=True,
                   capture_output=True)
    manifest = scratch / "manifest.yaml"
    manifest.write_text(f"""version: 1
models:
  - name: pyopencl
    command:
      argv: [{PYTHON}, {SCRIPT}, --precision, "{{precision}}"]
      env: {{PYOPENCL_NO_CACHE: "1", PYOPENCL_CTX: "0"}}
      timeout: 10m
      kinds: [pocl]
precisions: [{precision}]
targets: [cpu]
""")
    t = time.perf_counter()
    build = subprocess.run([args.prewarm, "build", str(manifest), "--key", str(keys / "test_only_bench.key"),
                            "--out", str(scratch / "bundle")], capture_output=True, text=True)
    build_s = time.perf_counter() - t
    if build.returncode != 0:
        print(f"bench: prewarm build failed, falling back to the captured cache:\n{build.stderr}", file=sys.stderr)
        return None
    root = scratch / "root"
    t = time.perf_counter()
    subprocess.run([args.runtime, "install", str(scratch / "bundle"), "--trust", str(keys / "test_only_bench.pub"),
                    "--root", str(root)], check=True, capture_output=True)
    install_s = time.perf_counter() - t
    size = sum(f.stat().st_size for f in (scratch / "bundle").rglob("*") if f.is_file())
    return ([args.runtime, "exec", "--root", str(root), "--"], base_env(),
            {"build_s": round(build_s, 3), "install_s": round(install_s, 3), "bundle_bytes": size})


def prepare_captured(args, scratch, precision):
    work = scratch / "capture"
    work.mkdir()
    subprocess.run([args.capture, str(work), "pocl", precision, "PYOPENCL_NO_CACHE=1", "PYOPENCL_CTX=0", "--",
                    PYTHON, str(SCRIPT), "--precision", "{precision}"], check=True, capture_output=True)
    env = base_env()
    env["POCL_CACHE_DIR"] = str(work / "staging" / "pocl")
    return [], env, {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "fp16"])
    parser.add_argument("--prewarm", help="the prewarm binary")
    parser.add_argument("--runtime", help="the prewarm-runtime binary")
    parser.add_argument("--capture", help="the command_capture test driver (fallback)")
    parser.add_argument("--results", type=Path, default=HERE / "results")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="prewarm-bench-command-"))
    try:
        prepared = None
        mode = "installed"
        if args.prewarm and args.runtime:
            prepared = prepare_installed(args, scratch, args.precision)
        if prepared is None:
            if not args.capture:
                sys.exit("bench: need --prewarm and --runtime (or --capture for the fallback)")
            mode = "captured"
            prepared = prepare_captured(args, scratch, args.precision)
        prefix, warm_env, setup = prepared
        script = [PYTHON, str(SCRIPT), "--precision", args.precision]
        samples = {"cold": [], mode: []}
        for i in range(args.runs):
            cold_dir = scratch / f"cold-{i}"
            cold_dir.mkdir()
            env = base_env()
            env["POCL_CACHE_DIR"] = str(cold_dir)
            samples["cold"].append(run_once(script, env))
            samples[mode].append(run_once(prefix + script, warm_env))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    def median(rows, key):
        return round(statistics.median(r[key] for r in rows), 4)

    summary = {m: {"first_result_s": median(rows, "first_result_s"), "wall_s": median(rows, "wall_s")}
               for m, rows in samples.items()}
    ratio = summary["cold"]["first_result_s"] / summary[mode]["first_result_s"]
    result = {
        "benchmark": "pyopencl warm-up, first result, fresh processes",
        "device": samples["cold"][0]["device"],
        "precision": args.precision,
        "runs": args.runs,
        "mode": mode,
        "setup": setup,
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
        "median": summary,
        "cold_over_prewarmed_first_result": round(ratio, 2),
        "samples": samples,
    }
    args.results.mkdir(parents=True, exist_ok=True)
    stem = args.results / f"pyopencl_pocl_{args.precision}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"# pyopencl warm-up on PoCL ({args.precision}): cold vs {mode}", "",
             f"Device: {result['device']}; {args.runs} fresh processes per mode, alternating; "
             f"load average at the end {', '.join('%.1f' % x for x in result['load_average'])} "
             f"on {result['cpus']} CPUs.", "",
             "| mode | median first result (s) | median process wall (s) |", "|---|---|---|"]
    for m in samples:
        lines.append(f"| {m} | {summary[m]['first_result_s']} | {summary[m]['wall_s']} |")
    lines += ["", f"Cold / {mode} (first result): **{ratio:.1f}x**."]
    if setup:
        lines.append(f"Setup: {json.dumps(setup)}")
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 3.2))
        for x, m in enumerate(samples):
            ys = [r["first_result_s"] for r in samples[m]]
            ax.scatter([x] * len(ys), ys, alpha=0.6)
            ax.hlines(summary[m]["first_result_s"], x - 0.25, x + 0.25)
        ax.set_xticks(range(len(samples)), list(samples))
        ax.set_ylabel("first result (s)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"pyopencl warm-up on PoCL, {args.precision}")
        fig.tight_layout()
        fig.savefig(stem.with_suffix(".png"), dpi=120)
    except ImportError:
        pass
    print("\n".join(lines))


if __name__ == "__main__":
    main()
