#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A torch.compile warm-up of a real transformers model: Qwen2ForCausalLM
(transformers' Qwen2 architecture, the one Qwen2.5 ships) with seeded random
weights, so nothing is downloaded. One compiled forward pass (prefill) and a
few decode steps on the GPU; the compiled logits are checked against eager
mode, so a cache that yields wrong kernels fails the run.

  python3 qwen2_compile_warmup.py --precision bf16 [--mode default|max-autotune-no-cudagraphs|reduce-overhead|...]
        [--layers 4 --hidden 512 --heads 8 --kv-heads 2 --vocab 32000 --prompt 64 --decode 2]
        [--dynamic false|true|mark] [--batches 2,4] [--graph-break] [--sampler]
        [--save-megacache FILE | --load-megacache FILE]

Beyond one compiled model: --dynamic true compiles with dynamic=True, mark with
torch._dynamo.mark_dynamic on the batch and sequence dimensions (one graph for
every length); --batches adds a prefill at each further batch size; --graph-break
compiles a step function that calls the model, breaks the graph
(torch._dynamo.graph_break()) and takes the log-softmax in a second graph;
--sampler compiles a second function (top-k of the last position's softmax)
called on every step. Modes with CUDA graphs (reduce-overhead, max-autotune)
mark each step begin and clone what a later replay would overwrite; the
steady-state calls (three, of the prefill shape) are where graphs are recorded
and replayed.

Prints one JSON line: first_call_s (compile + first forward), compile_s (the
torch.compile() call: where a precompiled Dynamo frame loads),
first_compiled_call_s (their sum), first_result_s (from process start), steady_s, the
tolerances checked, and the versions. Use it as a prewarm command workload:
  command: {argv: [python3, qwen2_compile_warmup.py, --precision, "{precision}"], kinds: [triton, inductor, cuda]}
Exits 1 when the compiled logits differ from eager beyond the precision's tolerance."""
import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
# Max |compiled - eager| / max|eager| on the logits: Inductor fuses and
# reorders reductions, so low precisions differ in the last bits.
TOLERANCE = {"fp32": 1e-3, "fp16": 2e-2, "bf16": 6e-2}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--precision", "--dtype", dest="dtype", choices=sorted(DTYPES), default="bf16")
    p.add_argument("--mode", default="default", help="torch.compile mode")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--prompt", type=int, default=64)
    p.add_argument("--decode", type=int, default=2)
    p.add_argument("--device", default="cuda")
    p.add_argument("--dynamic", choices=("false", "true", "mark"), default="false",
                   help="torch.compile(dynamic=...): false (a graph per shape), true, or mark: mark_dynamic on the"
                        " inputs' batch and sequence dimensions")
    p.add_argument("--batches", default="", help="further prefill batch sizes, comma separated (2,4)")
    p.add_argument("--graph-break", action="store_true",
                   help="compile a step function with a graph break between the model and its log-softmax")
    p.add_argument("--sampler", action="store_true", help="a second compiled function: top-k of the softmax")
    # skip_guard_on_all_nn_modules_unsafe is not offered: with
    # TORCH_CACHING_PRECOMPILE=1, torch 2.11 fails rebuilding a saved frame's guards
    # ("'_Missing' object has no attribute '_modules'").
    p.add_argument("--guard-filter", choices=("none", "inbuilt-nn-modules"), default="none",
                   help="inbuilt-nn-modules: torch.compile(options={'guard_filter_fn': torch.compiler."
                        "skip_guard_on_inbuilt_nn_modules_unsafe}): fewer guards to build and load")
    p.add_argument("--save-megacache", help="after the run, torch.compiler.save_cache_artifacts() into FILE")
    p.add_argument("--load-megacache", help="before compiling, torch.compiler.load_cache_artifacts() of FILE"
                   " (PyTorch's own portable cache: the comparison for a prewarm bundle)")
    p.add_argument("--arch", choices=sorted(ARCHS), default="qwen2",
                   help="transformers architecture built from a config (random weights)")
    p.add_argument("--eager-only", action="store_true",
                   help="no torch.compile: the first eager forward, what any process pays (CUDA, cuBLAS)")
    p.add_argument("--diag", metavar="DIR", help="write Dynamo's phase times, the counters and cProfile"
                   " profiles of the imports and of the first compiled call into DIR")
    args = p.parse_args()
    profiler = None
    if args.diag:
        import cProfile
        import os
        os.makedirs(args.diag, exist_ok=True)
        profiler = cProfile.Profile()
        profiler.enable()

    import torch
    import transformers
    from torch._dynamo.utils import counters

    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("qwen2_compile_warmup: no CUDA device")
    torch.manual_seed(0)
    dtype = getattr(torch, DTYPES[args.dtype])
    # Built on the device: random initialisation of half a billion weights on
    # the CPU would add seconds that every mode pays alike.
    with torch.device(args.device):
        model = build_model(transformers, args).to(dtype=dtype).eval()
    ids = torch.randint(0, args.vocab, (1, args.prompt), device=args.device)
    loaded = 0.0
    if args.load_megacache:
        t0 = time.perf_counter()
        with open(args.load_megacache, "rb") as f:
            torch.compiler.load_cache_artifacts(f.read())
        loaded = time.perf_counter() - t0
    imported = time.perf_counter() - STARTED
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(f"{args.diag}/imports.prof")
        profiler = cProfile.Profile()
        profiler.enable()
    if args.eager_only:
        return eager_only(args, model, ids, imported)
    # With TORCH_CACHING_PRECOMPILE=1 (prewarm's dynamo kind) Dynamo's
    # precompiled frame is loaded here: part of the first compiled call.
    t0 = time.perf_counter()
    options = None
    if args.guard_filter == "inbuilt-nn-modules":
        options = {"guard_filter_fn": torch.compiler.skip_guard_on_inbuilt_nn_modules_unsafe}
    mode = None if args.mode == "default" else args.mode
    dynamic = {"false": False, "true": True, "mark": None}[args.dynamic]

    def step(tokens):
        logits = model(input_ids=tokens).logits
        # Dynamo ends the graph here and starts another after it: two graphs
        # and a resume function for one frame.
        torch._dynamo.graph_break()
        return torch.log_softmax(logits.float(), dim=-1)

    def sample(logits):
        return torch.topk(torch.softmax(logits[:, -1].float(), dim=-1), 8)

    def direct(fn):
        return lambda tokens: fn(input_ids=tokens).logits

    compiled = torch.compile(step if args.graph_break else model, mode=mode, dynamic=dynamic, options=options)
    compiled_sampler = torch.compile(sample, mode=mode, dynamic=dynamic) if args.sampler else None
    compile_call = time.perf_counter() - t0
    graphs = mode in ("reduce-overhead", "max-autotune")  # the modes that record CUDA graphs
    compiled_fn = compiled if args.graph_break else direct(compiled)

    def eager_step(tokens):
        logits = model(input_ids=tokens).logits
        return torch.log_softmax(logits.float(), dim=-1) if args.graph_break else logits

    def forward(fn, tokens, sampler=None):
        if args.dynamic == "mark" and fn is compiled_fn:
            torch._dynamo.mark_dynamic(tokens, 0)
            torch._dynamo.mark_dynamic(tokens, 1)
        if graphs and fn is compiled_fn:
            torch.compiler.cudagraph_mark_step_begin()
        with torch.no_grad():
            out = fn(tokens)
            picked = sampler(out) if sampler is not None else None
            if graphs and fn is compiled_fn:
                out = out.clone()
                picked = None if picked is None else (picked[0].clone(), picked[1].clone())
        if args.device == "cuda":
            torch.cuda.synchronize()
        return out, picked

    t0 = time.perf_counter()
    logits, picked = forward(compiled_fn, ids, compiled_sampler)
    first_call = time.perf_counter() - t0
    first_result = time.perf_counter() - STARTED
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(f"{args.diag}/first_compiled_call.prof")
        write_diag(args.diag, torch, counters)
    reference, ref_picked = forward(eager_step, ids, sample if args.sampler else None)
    error = relative_error(logits, reference)
    if picked is not None:
        error = max(error, relative_error(picked[0], ref_picked[0]))
    if not error <= TOLERANCE[args.dtype]:
        sys.exit(f"qwen2_compile_warmup: compiled logits differ from eager: {error:.3g} > {TOLERANCE[args.dtype]}")
    # Greedy decode without a KV cache: each step a new sequence length, so
    # (dynamic=False) a new graph: what a server's first requests compile.
    # Then a prefill at each further batch size (--batches): a new graph each
    # unless the shapes are dynamic. Every one is checked against eager.
    t0 = time.perf_counter()
    tokens = ids
    for _ in range(args.decode):
        out, _picked = forward(compiled_fn, tokens, compiled_sampler)
        nxt = out[:, -1:].argmax(-1)
        tokens = torch.cat([tokens, nxt], dim=1)
    batch_outputs = []
    for batch in [int(b) for b in args.batches.split(",") if b]:
        more = torch.randint(0, args.vocab, (batch, args.prompt + 1), device=args.device)
        batch_outputs.append((more, forward(compiled_fn, more, compiled_sampler)[0]))
    decode = time.perf_counter() - t0
    for more, out in batch_outputs:
        error = max(error, relative_error(out, forward(eager_step, more)[0]))
    if not error <= TOLERANCE[args.dtype]:
        sys.exit(f"qwen2_compile_warmup: compiled outputs differ from eager: {error:.3g} > {TOLERANCE[args.dtype]}")
    # Steady state: the prefill shape three more times (CUDA graphs record on
    # a later call and replay after): the fastest.
    steady = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        forward(compiled_fn, ids, compiled_sampler)
        steady = min(steady, time.perf_counter() - t0)
    if args.save_megacache:
        artifacts = torch.compiler.save_cache_artifacts()
        if artifacts is None:
            sys.exit("qwen2_compile_warmup: torch.compiler.save_cache_artifacts() returned nothing")
        with open(args.save_megacache, "wb") as f:
            f.write(artifacts[0])
    print(json.dumps({"model": type(model).__name__, "precision": args.dtype, "compile_mode": args.mode, "dynamic": args.dynamic,
                      "graph_break": args.graph_break, "sampler": args.sampler, "batches": args.batches, "guard_filter": args.guard_filter, "layers": args.layers,
                      "hidden": args.hidden, "first_call_s": round(first_call, 4), "decode_s": round(decode, 4),
                      "compile_s": round(compile_call, 4), "first_compiled_call_s": round(compile_call + first_call, 4),
                      "first_result_s": round(first_result, 4),
                      "dynamo_cache_hit": counters["dynamo_cache"]["dynamo_cache_hit"],
                      # Frames Dynamo traced in this process (0 when every frame came precompiled).
                      "frames_traced": counters["stats"]["unique_graphs"],
                      "fxgraph_cache_hit": counters["inductor"]["fxgraph_cache_hit"],
                      "autograd_cache_hit": counters["aot_autograd"]["autograd_cache_hit"],
                      "caching_precompile": bool(torch._dynamo.config.caching_precompile),
                      "steady_s": round(steady, 5), "import_s": round(imported, 3),
                      "megacache_load_s": round(loaded, 4),
                      "relative_error": error, "tolerance": TOLERANCE[args.dtype],
                      "torch": torch.__version__, "transformers": transformers.__version__,
                      "device": torch.cuda.get_device_name() if args.device == "cuda" else args.device}))


ARCHS = ("gpt2", "llama", "qwen2")


def relative_error(value, reference):
    """Max |value - reference| / max |reference|."""
    scale = reference.float().abs().max().item() or 1.0
    return (value.float() - reference.float()).abs().max().item() / scale


def build_model(transformers, args):
    """The model from a config: no download. Dimensions from the arguments."""
    common = dict(vocab_size=args.vocab, tie_word_embeddings=True, use_cache=False)
    if args.arch == "gpt2":
        config = transformers.GPT2Config(n_embd=args.hidden, n_layer=args.layers, n_head=args.heads, bos_token_id=0, eos_token_id=0,
                                         n_positions=4 * (args.prompt + args.decode), **common)
        return transformers.GPT2LMHeadModel(config)
    config_class, model_class = {"qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
                                 "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM)}[args.arch]
    config = config_class(hidden_size=args.hidden, intermediate_size=args.hidden * 11 // 4,
                          num_hidden_layers=args.layers, num_attention_heads=args.heads,
                          num_key_value_heads=args.kv_heads, max_position_embeddings=4 * (args.prompt + args.decode),
                          rope_theta=1e6, **common)
    return model_class(config)


def eager_only(args, model, ids, imported):
    import torch
    t0 = time.perf_counter()
    with torch.no_grad():
        model(input_ids=ids)
    if args.device == "cuda":
        torch.cuda.synchronize()
    first_call = time.perf_counter() - t0
    first_result = time.perf_counter() - STARTED
    t0 = time.perf_counter()
    with torch.no_grad():
        model(input_ids=ids)
    if args.device == "cuda":
        torch.cuda.synchronize()
    print(json.dumps({"model": type(model).__name__, "precision": args.dtype, "compile_mode": "eager",
                      "first_call_s": round(first_call, 4), "first_compiled_call_s": round(first_call, 4),
                      "compile_s": 0.0, "first_result_s": round(first_result, 4), "import_s": round(imported, 3),
                      "steady_s": round(time.perf_counter() - t0, 5), "relative_error": 0.0,
                      "torch": torch.__version__,
                      "device": torch.cuda.get_device_name() if args.device == "cuda" else args.device}))


def write_diag(directory, torch, counters):
    from torch._dynamo import utils
    with open(f"{directory}/phases.txt", "w") as f:
        f.write(utils.compile_times("str", aggregate=True) + "\n")
        # Each call's time too: one after_deserialization per precompiled graph.
        f.write(utils.compile_times("str", aggregate=False) + "\n")
    with open(f"{directory}/counters.json", "w") as f:
        json.dump({"counters": {k: dict(v) for k, v in counters.items()},
                   "time_spent": utils.calculate_time_spent(),
                   "guard_failures": {str(k): [str(x) for x in v] for k, v in utils.guard_failures.items()},
                   "compile_threads": torch._inductor.config.compile_threads,
                   "static_launcher": torch._inductor.config.use_static_cuda_launcher,
                   "sys_flags_dont_write_bytecode": sys.flags.dont_write_bytecode}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
