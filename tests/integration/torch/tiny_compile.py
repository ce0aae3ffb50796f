#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small transformers model under torch.compile on the CPU: the application
the torch integration test warms up, ships and runs again. Qwen2ForCausalLM
(the architecture Qwen2.5 ships) built from a config in code with seeded
random weights: nothing is downloaded (HF_HUB_OFFLINE=1). Inductor's CPU
backend compiles the graph's C++ with g++.

  python3 tiny_compile.py [--layers 2 --hidden 64 --prompt 16]
        [--save-megacache FILE | --load-megacache FILE]

Prints one JSON line: first_compiled_call_s (torch.compile(), where a
precompiled frame is loaded, plus the first forward: Dynamo, Inductor, the
run), first_result_s (from process start), the counters that say what was traced,
compiled and loaded, and the relative error against eager mode. Exits 1 when
the compiled logits differ from eager beyond the tolerance: a cache that
yields a wrong graph fails the run. The application's code is the same with
and without prewarm; what changes is only the environment (exec/env)."""
import argparse
import json
import os
import sys
import time

STARTED = time.perf_counter()
TOLERANCE = 1e-4  # fp32: Inductor reorders reductions, nothing more


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--prompt", type=int, default=16)
    p.add_argument("--precision", default="fp32", help="accepted for manifests' {precision}; fp32 only")
    p.add_argument("--save-megacache", help="after the run, torch.compiler.save_cache_artifacts() into FILE")
    p.add_argument("--load-megacache", help="before compiling, torch.compiler.load_cache_artifacts() of FILE")
    args = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch
    import transformers
    from torch._dynamo.utils import counters
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=args.vocab, hidden_size=args.hidden, intermediate_size=args.hidden * 2,
                         num_hidden_layers=args.layers, num_attention_heads=args.heads,
                         num_key_value_heads=args.kv_heads, max_position_embeddings=4 * args.prompt,
                         tie_word_embeddings=True, use_cache=False)
    model = Qwen2ForCausalLM(config).eval()
    ids = torch.randint(0, args.vocab, (1, args.prompt))
    loaded = 0.0
    if args.load_megacache:
        t0 = time.perf_counter()
        with open(args.load_megacache, "rb") as f:
            torch.compiler.load_cache_artifacts(f.read())
        loaded = time.perf_counter() - t0
    imported = time.perf_counter() - STARTED
    # With TORCH_CACHING_PRECOMPILE=1 this is where Dynamo's precompiled frame
    # is loaded (and Inductor's ISA probe runs): part of the first compiled call.
    t0 = time.perf_counter()
    compiled = torch.compile(model, dynamic=False)
    compile_call = time.perf_counter() - t0

    with torch.no_grad():
        t0 = time.perf_counter()
        logits = compiled(input_ids=ids).logits
        first_call = time.perf_counter() - t0
        first_result = time.perf_counter() - STARTED
        reference = model(input_ids=ids).logits
    scale = reference.abs().max().item() or 1.0
    error = (logits - reference).abs().max().item() / scale
    if not error <= TOLERANCE:
        sys.exit(f"tiny_compile: compiled logits differ from eager: {error:.3g} > {TOLERANCE}")
    if args.save_megacache:
        artifacts = torch.compiler.save_cache_artifacts()
        if artifacts is None:
            sys.exit("tiny_compile: torch.compiler.save_cache_artifacts() returned nothing")
        with open(args.save_megacache, "wb") as f:
            f.write(artifacts[0])
    print(json.dumps({
        "model": "Qwen2ForCausalLM", "layers": args.layers, "hidden": args.hidden,
        "compile_s": round(compile_call, 4), "first_call_s": round(first_call, 4),
        "first_compiled_call_s": round(compile_call + first_call, 4), "first_result_s": round(first_result, 4),
        "import_s": round(imported, 3), "megacache_load_s": round(loaded, 4),
        "relative_error": error, "tolerance": TOLERANCE,
        "fxgraph_cache_hit": counters["inductor"]["fxgraph_cache_hit"],
        "fxgraph_cache_miss": counters["inductor"]["fxgraph_cache_miss"],
        "autograd_cache_hit": counters["aot_autograd"]["autograd_cache_hit"],
        "dynamo_cache_hit": counters["dynamo_cache"]["dynamo_cache_hit"],
        "dynamo_cache_miss": counters["dynamo_cache"]["dynamo_cache_miss"],
        "dynamo_cache_error": counters["dynamo_cache"]["dynamo_cache_error"],
        "frames_traced": counters["stats"]["unique_graphs"],
        "caching_precompile": bool(torch._dynamo.config.caching_precompile),
        "torch": torch.__version__, "transformers": transformers.__version__,
        "python": sys.version.split()[0], "device": "cpu"}))


if __name__ == "__main__":
    main()
