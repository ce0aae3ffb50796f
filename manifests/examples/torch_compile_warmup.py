#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torch.compile warm-up: a small decoder-only transformer (random weights)
compiled with Inductor and run on a prefill and a decode shape, each checked
against eager mode.

As a prewarm command workload (manifests/examples/torch.yaml) it fills the
Inductor FX-graph / AOTAutograd caches, Triton's kernel cache and, on NVIDIA,
the CUDA ComputeCache; prewarm packages them per precision. Run it again
against an installed bundle (prewarm-runtime exec) and the compile step is
served from the caches.

For comparison it can also use PyTorch's own portable "Mega-Cache":
  --mega-cache-save FILE   after the run, torch.compiler.save_cache_artifacts() to FILE
  --mega-cache-load FILE   before compiling, torch.compiler.load_cache_artifacts(FILE)

Prints one JSON line on stdout:
  first_call_s     the first call of the compiled model (prefill shape): Dynamo
                   tracing plus compilation or cache loads plus execution, synchronized.
                   This is the stall a warm cache removes.
  compile_calls_s  the first calls of both shapes (prefill, then decode, which
                   compiles a second graph)
  first_result_s   from the start of this script (imports, CUDA start-up, model
                   creation included) to the first compiled result
  total_s, import_s, mega_cache_load_s
Every compiled result is then checked against eager mode (not timed).
"""
import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

T_IMPORT = time.perf_counter() - T0


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


class Block(torch.nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = torch.nn.Linear(hidden, hidden, bias=False)
        self.norm2 = RMSNorm(hidden)
        self.gate = torch.nn.Linear(hidden, ffn, bias=False)
        self.up = torch.nn.Linear(hidden, ffn, bias=False)
        self.down = torch.nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, s, h))
        y = self.norm2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class TinyDecoder(torch.nn.Module):
    def __init__(self, hidden, heads, ffn, layers, vocab):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.blocks = torch.nn.ModuleList(Block(hidden, heads, ffn) for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.head = torch.nn.Linear(hidden, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", choices=["fp32", "fp16", "bf16"], default="fp32")
    parser.add_argument("--device", default="auto", help="cuda, xpu, cpu or auto")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--prefill", type=int, default=64)
    parser.add_argument("--mode", default=None, help="torch.compile mode (default, max-autotune, ...)")
    parser.add_argument("--mega-cache-save", metavar="FILE")
    parser.add_argument("--mega-cache-load", metavar="FILE")
    args = parser.parse_args()

    if args.device == "auto":
        if torch.cuda.is_available():
            args.device = "cuda"
        elif hasattr(torch, "xpu") and torch.xpu.is_available():
            args.device = "xpu"
        else:
            args.device = "cpu"
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    tol = 1e-3 if dtype == torch.float32 else 3e-2

    mega_load_s = 0.0
    if args.mega_cache_load:
        t = time.perf_counter()
        with open(args.mega_cache_load, "rb") as f:
            torch.compiler.load_cache_artifacts(f.read())
        mega_load_s = time.perf_counter() - t

    torch.manual_seed(0)
    model = TinyDecoder(args.hidden, args.heads, 4 * args.hidden, args.layers, args.vocab)
    model = model.to(device=args.device, dtype=dtype).eval()
    compiled = torch.compile(model, mode=args.mode)

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()
        elif args.device == "xpu":
            torch.xpu.synchronize()

    def check(name, got, want):
        err = (got.float() - want.float()).abs().max().item()
        scale = want.float().abs().max().item() + 1e-6
        if not err <= tol * max(1.0, scale):
            print(f"torch_compile_warmup: {name}: max error {err} (scale {scale}) > tolerance", file=sys.stderr)
            sys.exit(1)

    shapes = [("prefill", 1, args.prefill), ("decode", 1, 1)]
    timings = {}
    first_result = None
    with torch.no_grad():
        for name, batch, seq in shapes:
            tokens = torch.randint(0, args.vocab, (batch, seq), device=args.device)
            t = time.perf_counter()
            out = compiled(tokens)
            sync()
            timings[name + "_s"] = round(time.perf_counter() - t, 4)
            if first_result is None:
                first_result = time.perf_counter() - T0
            check(name, out, model(tokens))
    total = time.perf_counter() - T0

    if args.mega_cache_save:
        artifacts = torch.compiler.save_cache_artifacts()
        if artifacts is None:
            print("torch_compile_warmup: save_cache_artifacts() returned nothing", file=sys.stderr)
            sys.exit(1)
        blob, _info = artifacts
        with open(args.mega_cache_save, "wb") as f:
            f.write(blob)

    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = None
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else args.device
    print(json.dumps({"device": device_name, "precision": args.precision, "torch": torch.__version__,
                      "triton": triton_version, "import_s": round(T_IMPORT, 4),
                      "mega_cache_load_s": round(mega_load_s, 4),
                      "compile_mode": args.mode or "default",
                      "first_call_s": timings["prefill_s"],
                      "compile_calls_s": round(timings["prefill_s"] + timings["decode_s"], 4),
                      "first_result_s": round(first_result, 4), "total_s": round(total, 4), **timings}))


if __name__ == "__main__":
    main()
