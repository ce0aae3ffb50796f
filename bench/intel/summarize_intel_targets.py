#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The table of bench/intel/intel_targets_build.sh: medians (min-max) per
mode, the build per target against the warm-up once, and the ocloc runs."""
import json
import statistics
import sys

TARGETS = 3
MODELS = 2


def spread(values):
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main(samples_file, jobs):
    samples = [json.loads(line) for line in open(samples_file)]
    modes = list(dict.fromkeys(s["mode"] for s in samples))
    warmup = statistics.median(s["seconds"] for s in samples if s["mode"] == "warmup")
    print(f"`prewarm build --jobs {jobs}`: 2 models x 3 absent Intel targets (arc-b580, arc-a770, mtl-u-igpu), "
          "fp32; warmup: `prewarm run qwen2.5-0.5b --precision fp32` once on PoCL, cold cache. "
          "Seconds: median (min-max).\n")
    print("| mode | n | seconds | per target (2 models) | per target / warmup | per target and model / warmup "
          "| card synthesis s (sum of jobs) | ocloc compile runs (distinct) | ocloc validate runs (distinct) "
          "| jobs ok | load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mode in modes:
        rows = [s for s in samples if s["mode"] == mode]
        seconds = [s["seconds"] for s in rows]
        loads = ", ".join(s["load"] for s in rows)
        if mode == "warmup":
            print(f"| warmup | {len(rows)} | {spread(seconds)} | | | | | | | | {loads} |")
            continue
        per_target = [x / TARGETS for x in seconds]
        last = rows[-1]
        runs, distinct = last["ocloc_runs"], last["ocloc_distinct"]
        ok = f"{last['ok']}/{last['jobs']}"
        print(f"| {mode} | {len(rows)} | {spread(seconds)} | {spread(per_target)} | "
              f"{statistics.median(per_target) / warmup:.2f}x | "
              f"{statistics.median(per_target) / MODELS / warmup:.2f}x | "
              f"{spread([s['card_synthesis_seconds'] for s in rows])} | "
              f"{runs.get('compile', 0)} ({distinct.get('compile', 0)}) | "
              f"{runs.get('validate', 0)} ({distinct.get('validate', 0)}) | {ok} | {loads} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
