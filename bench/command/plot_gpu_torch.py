#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots gpu_torch_compile.sh results: the first compiled call per mode
(median of fresh processes), Mega-Cache's load_cache_artifacts() stacked on
its first call.

  plot_gpu_torch.py OUT.png RESULTS_DIR [RESULTS_DIR...]

Each RESULTS_DIR holds a samples.jsonl; its torch.compile mode is read from
the samples (compile_mode)."""
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = [("cold", "cold (empty caches)"), ("megacache", "PyTorch Mega-Cache"), ("prewarm", "prewarm bundle")]


def load(directory):
    rows = [json.loads(line) for line in open(f"{directory}/samples.jsonl") if line.strip()]
    return [r for r in rows if r.get("phase") == "torch" and "first_call_s" in r]


def main():
    out, dirs = sys.argv[1], sys.argv[2:]
    groups = []  # (label, {mode: (first_call, load)})
    for directory in dirs:
        rows = load(directory)
        for precision in sorted({r["precision"] for r in rows}):
            by_mode = {}
            for mode, _ in MODES:
                rs = [r for r in rows if r["precision"] == precision and r["mode"] == mode]
                if rs:
                    by_mode[mode] = (statistics.median(r["first_call_s"] for r in rs),
                                     statistics.median(r.get("mega_cache_load_s", 0.0) for r in rs))
            groups.append((f"{rows[0].get('compile_mode', 'default')}\n{precision}", by_mode))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.26
    colors = {"cold": "#b0b0b0", "megacache": "#e69f00", "prewarm": "#0072b2"}
    for i, (mode, label) in enumerate(MODES):
        xs, firsts, loads = [], [], []
        for g, (_, by_mode) in enumerate(groups):
            if mode in by_mode:
                xs.append(g + (i - 1) * width)
                firsts.append(by_mode[mode][0])
                loads.append(by_mode[mode][1])
        ax.bar(xs, firsts, width, color=colors[mode], label=f"{label}: first call")
        if any(loads):
            ax.bar(xs, loads, width, bottom=firsts, color=colors[mode], alpha=0.4, hatch="//",
                   label=f"{label}: load_cache_artifacts()")
        for x, f, l in zip(xs, firsts, loads):
            ax.text(x, f + l, f"{f + l:.1f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(groups)), [g[0] for g in groups])
    ax.set_ylabel("seconds (median of fresh processes)")
    ax.set_title("torch.compile first call, NVIDIA H200: cold vs Mega-Cache vs prewarm")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
