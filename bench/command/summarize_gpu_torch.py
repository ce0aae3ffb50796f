#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Medians of bench/command/gpu_torch_dynamo.sh's samples.jsonl as a Markdown
table: per architecture, precision and mode, the first compiled call
(torch.compile() + first forward; Mega-Cache: + its load) and the first token
from process start, with the ratios that the goals name.

  summarize_gpu_torch.py samples.jsonl [more.jsonl ...]"""
import json
import statistics
import sys

BASE_MODES = ("eager", "cold", "warm", "megacache", "inductor", "dynamo", "dynpyc", "anypath")
# MODE+pyc: the same with Python's bytecode cached (gpu_torch_dynamo.sh PYCACHE=1).
MODES = BASE_MODES + tuple(m + "+pyc" for m in BASE_MODES)


def first_compiled_call(r):
    return r["first_compiled_call_s"] + r.get("megacache_load_s", 0.0)


def compile_affected(r):
    # torch.compile() plus every compiled call: the first forward and the
    # decode steps (each decode shape is its own graph in a cold process).
    return first_compiled_call(r) + r.get("decode_s", 0.0)


def main(paths):
    rows = [json.loads(line) for path in paths for line in open(path) if line.strip()]
    print("| model | precision | mode | n | first compiled call s (median) | of which torch.compile() s"
          " | compile-affected total s | first token from start s | wall s | before torch.compile s | frames traced"
          " | dynamo frames loaded |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for key in sorted({(r.get("arch", "qwen2"), r["precision"]) for r in rows}):
        med = {}
        for mode in MODES:
            rs = [r for r in rows if (r.get("arch", "qwen2"), r["precision"]) == key and r["mode"] == mode]
            if not rs:
                continue
            fc = statistics.median(first_compiled_call(r) for r in rs)
            ft = statistics.median(r["first_result_s"] for r in rs)
            ca = statistics.median(compile_affected(r) for r in rs)
            wall = statistics.median(r.get("wall_s", 0.0) for r in rs)
            med[mode] = (fc, ft, ca)
            traced = "/".join(str(r.get("frames_traced", "-")) for r in rs)
            loaded = "/".join(str(r.get("dynamo_cache_hit", "-")) for r in rs)
            print(f"| {rs[0]['model']} | {key[1]} | {mode} | {len(rs)} | {fc:.2f} | "
                  f"{statistics.median(r['compile_s'] for r in rs):.2f} | {ca:.2f} | {ft:.2f} | {wall:.2f} | "
                  f"{statistics.median(r['import_s'] for r in rs):.2f} | {traced} | {loaded} |")
        pairs = (("anypath", "warm"), ("anypath", "dynpyc"), ("dynpyc", "warm"), ("dynpyc", "dynamo"), ("dynamo", "warm"), ("inductor", "warm"), ("megacache", "warm"), ("dynamo", "cold"))
        for a, b in pairs + tuple((a + "+pyc", b + "+pyc") for a, b in pairs) + (("dynamo+pyc", "warm"),):
            if a in med and b in med:
                ratios.append(f"{key[0]} {key[1]}: {a}/{b}: first compiled call {med[a][0] / med[b][0]:.2f}, "
                              f"compile-affected total {med[a][2] / med[b][2]:.2f}, first token {med[a][1] / med[b][1]:.2f}")
    print()
    for line in ratios:
        print(f"- {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
