#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Stand-in for torch_compile_warmup.py in dry runs of gpu_torch_compile.sh on
a host without torch or a GPU (DRY_RUN=1 TORCH_SCRIPT=<this>): it "compiles"
(sleeps) unless its entry is in the cache directories the real stack uses,
writes entries there like Inductor and Triton would, and prints the same JSON
line. It tests the script's plumbing, never the speed of anything."""
import argparse
import json
import os
import time

T0 = time.perf_counter()
parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="fp32")
parser.add_argument("--mega-cache-save")
parser.add_argument("--mega-cache-load")
args = parser.parse_args()

key = f"standin-{args.precision}"
inductor = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor_standin")
triton = os.environ.get("TRITON_CACHE_DIR", os.path.join(inductor, "triton"))
entry = os.path.join(inductor, "fxgraph", key, "entry")
if args.mega_cache_load:
    blob = json.load(open(args.mega_cache_load))
    os.makedirs(os.path.dirname(entry), exist_ok=True)
    open(entry, "w").write(blob["entry"])
hit = os.path.exists(entry)
time.sleep(0.1 if hit else 1.0)
if not hit:
    os.makedirs(os.path.dirname(entry), exist_ok=True)
    open(entry, "w").write(key)
    os.makedirs(os.path.join(triton, key), exist_ok=True)
    open(os.path.join(triton, key, "kernel.cubin"), "w").write(key)
first = time.perf_counter() - T0
if args.mega_cache_save:
    json.dump({"entry": key}, open(args.mega_cache_save, "w"))
print(json.dumps({"device": "standin", "precision": args.precision, "torch": None, "triton": None,
                  "first_result_s": round(first, 4), "total_s": round(time.perf_counter() - T0, 4),
                  "cache_hit": hit}))
