# SPDX-License-Identifier: Apache-2.0
"""(a, GPU) First call of a real transformers model under torch.compile in a
fresh process (bench/command/qwen2_compile_warmup.py: Qwen2ForCausalLM
with random weights, compiled logits checked against eager), by cache state:

  cold       empty TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, CUDA_CACHE_PATH
  warm       the same directories as one earlier run left them (warm in place)
  megacache  empty directories + torch.compiler.load_cache_artifacts() of the
             blob an earlier run saved (PyTorch's own portable cache)
  installed  `prewarm build` (command workload: triton, inductor, cuda) ->
             `prewarm-runtime install` -> each sample on a copy of the root
             through `prewarm-runtime exec`"""
import json
import shutil
import subprocess

from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh
from .common import load_json, ratio_goal

CACHE_VARIABLES = {"triton": "TRITON_CACHE_DIR", "inductor": "TORCHINDUCTOR_CACHE_DIR", "cuda": "CUDA_CACHE_PATH"}


class TorchCompile(Case):
    name = "torch_compile"
    title = "torch.compile first call of Qwen2ForCausalLM (transformers) by cache state"
    primary = "first_call_s"
    modes = ("cold", "warm", "megacache", "installed")
    ratios = (("cold/installed", "cold", "installed"), ("installed/warm", "installed", "warm"),
              ("installed/megacache", "installed", "megacache"))
    rounds_quick = 1
    rounds_full = 2

    def __init__(self):
        self.prepared = {}

    def unavailable(self, ctx):
        if not ctx.has_nvidia_gpu():
            return "no NVIDIA GPU visible (nvidia-smi): the torch.compile case runs on the GPU machine"
        if subprocess.run(["python3", "-c", "import torch, transformers"], capture_output=True).returncode:
            return "python3 cannot import torch and transformers"
        return None

    def variants(self, ctx):
        return ["qwen2 bf16"] if ctx.quick else ["qwen2 bf16", "qwen2 fp16"]

    def argv(self, ctx, dtype, *extra):
        return ["python3", ctx.repo / "bench/command/qwen2_compile_warmup.py", "--precision", dtype,
                "--decode", "1", *extra]

    def fresh_dirs(self, base):
        for d in CACHE_VARIABLES:
            (base / d).mkdir(parents=True, exist_ok=True)
        return {v: base / d for d, v in CACHE_VARIABLES.items()} | {"CUDA_CACHE_DISABLE": "0"}

    def prepare(self, ctx, variant):
        dtype = variant.split()[1]
        fill = ctx.scratch(f"cases/tc-{dtype}-fill")
        blob = fill / "megacache.bin"
        run_fresh(self.argv(ctx, dtype, "--save-megacache", blob),
                  env=clean_environment(self.fresh_dirs(fill / "caches"))).check()
        target = self.target(ctx)
        manifest = ("version: 1\nmodels:\n  - name: qwen2\n    command:\n"
                    f"      argv: [python3, {ctx.repo / 'bench/command/qwen2_compile_warmup.py'},"
                    " --precision, \"{precision}\", --decode, \"1\"]\n"
                    "      kinds: [triton, inductor, cuda]\n"
                    f"precisions: [{dtype}]\ntargets: [{target}]\nbundle:\n  channel: bench\n  expires: 90d\n")
        # Inductor and Triton key some entries by the cache directory's path:
        # the build captures at the path where every installed sample runs
        # (`prewarm build --capture-root`, as docs/guide/nvidia-torch-compile.md tells users to).
        sample_root = ctx.work / self.sample_root_name(dtype)
        bundle, _, report = ctx.bundle_for(manifest, f"cases/tc-{dtype}-build",
                                           extra_args=("--capture-root", sample_root))
        root = ctx.installed_root(bundle, f"cases/tc-{dtype}-installed")
        self.prepared[variant] = (dtype, fill / "caches", blob, root, report)

    @staticmethod
    def sample_root_name(dtype):
        return f"cases/tc-{dtype}-sample/root"

    def target(self, ctx):
        listing = ctx.prewarm_json("targets", "--json")
        runnable = [t["name"] for t in listing["targets"]
                    if t["vendor"] == "nvidia" and t.get("host", {}).get("strategy") == "run"]
        if not runnable:
            raise BenchError("no NVIDIA registry target is runnable on this host (prewarm targets)")
        return runnable[0]

    def sample(self, ctx, variant, mode, round_):
        dtype, fill, blob, root, _ = self.prepared[variant]
        base = ctx.scratch(f"cases/tc-{dtype}-sample")
        if mode == "installed":
            run = ctx.exec_under(ctx.copy_tree(root, self.sample_root_name(dtype)), self.argv(ctx, dtype),
                                 env={"CUDA_CACHE_DISABLE": "0"})
        elif mode == "warm":
            run = run_fresh(self.argv(ctx, dtype), env=clean_environment(
                self.fresh_dirs(ctx.copy_tree(fill, f"cases/tc-{dtype}-sample/caches"))))
        else:
            extra = ("--load-megacache", blob) if mode == "megacache" else ()
            run = run_fresh(self.argv(ctx, dtype, *extra), env=clean_environment(self.fresh_dirs(base / "caches")))
        out = load_json(run.check().stdout.strip().splitlines()[-1])
        return {"first_call_s": out["first_call_s"] + out.get("megacache_load_s", 0.0),
                "decode_s": out["decode_s"], "wall_s": run.seconds, "max_rss_mib": run.max_rss_mib}

    def goals(self, result):
        return [
            ratio_goal(result, "torch.compile through the bundle <= 1.1x warm in place", "<= 1.1", "installed", "warm",
                       lambda r: r <= 1.1),
            ratio_goal(result, "torch.compile through the bundle no slower than Mega-Cache", "<= 1.0", "installed",
                       "megacache", lambda r: r <= 1.0),
        ]

    def notes(self, ctx):
        return ["first_call_s: compile + first forward of the compiled model (Mega-Cache: + its load time), inside"
                " the process; wall_s adds Python, torch and transformers imports (about 20 s on the H100 host)."]
