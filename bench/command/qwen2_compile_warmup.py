#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# torch.compile warm-up of a real transformers model: Qwen2ForCausalLM with
# random weights (a small Qwen2Config, nothing downloaded), on CUDA.
# Prints one JSON line: {"precision", "compile_and_first_s", "second_s",
# "max_abs_diff", "ok"}; exits 1 when the compiled logits differ from eager.
#   qwen2_compile_warmup.py --precision fp16|bf16|fp32 [--layers 2] [--hidden 256]
import argparse
import json
import sys
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
TOLERANCE = {"fp32": 1e-3, "fp16": 3e-2, "bf16": 1.5e-1}

ap = argparse.ArgumentParser()
ap.add_argument("--precision", default="fp16", choices=sorted(DTYPES))
ap.add_argument("--layers", type=int, default=2)
ap.add_argument("--hidden", type=int, default=256)
ap.add_argument("--tokens", type=int, default=32)
args = ap.parse_args()

torch.manual_seed(0)
config = Qwen2Config(vocab_size=4096, hidden_size=args.hidden, intermediate_size=args.hidden * 4,
                     num_hidden_layers=args.layers, num_attention_heads=4, num_key_value_heads=2,
                     max_position_embeddings=256)
dtype = DTYPES[args.precision]
model = Qwen2ForCausalLM(config).to(device="cuda", dtype=dtype).eval()
ids = torch.randint(0, config.vocab_size, (1, args.tokens), device="cuda")

with torch.no_grad():
    eager = model(input_ids=ids, use_cache=False).logits.float()
    compiled = torch.compile(model)
    t = time.perf_counter()
    first = compiled(input_ids=ids, use_cache=False).logits.float()
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - t
    t = time.perf_counter()
    compiled(input_ids=ids, use_cache=False)
    torch.cuda.synchronize()
    second_s = time.perf_counter() - t

diff = (first - eager).abs().max().item()
ok = diff <= TOLERANCE[args.precision] * max(1.0, eager.abs().max().item())
print(json.dumps({"precision": args.precision, "compile_and_first_s": round(compile_s, 3),
                  "second_s": round(second_s, 4), "max_abs_diff": diff, "ok": ok}))
sys.exit(0 if ok else 1)
