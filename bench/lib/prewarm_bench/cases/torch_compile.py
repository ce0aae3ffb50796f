# SPDX-License-Identifier: Apache-2.0
"""(a, GPU) A real transformers model under torch.compile in a fresh process
(bench/command/qwen2_compile_warmup.py: Qwen2ForCausalLM with Qwen2.5-0.5B's
dimensions and random weights, a 64-token prefill and three decode steps, so
three compiled graphs; compiled logits checked against eager), by cache state:

  cold         empty TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, CUDA_CACHE_PATH
  warm         the same directories as one earlier run left them (warm in place)
  megacache    empty directories + torch.compiler.load_cache_artifacts() of the
               blob an earlier run saved (PyTorch's own portable cache)
  capture_root `prewarm build --capture-root ROOT` of kinds [triton, dynamo,
               cuda, pycache] (the recommendation of
               docs/guide/nvidia-torch-compile.md), installed, each sample on
               a copy of the root at ROOT through `prewarm-runtime exec`
  any_path     the same kinds built with no flag, each sample on a copy of
               the installed root at another path: what a user gets by default

Metrics per sample: torch.compile() itself, the first compiled call, the
compile-affected total (torch.compile() + every compiled call: the prefill
and the decode steps; Mega-Cache's load included), token 1 and token N from
process start (the script's own clock, started before its imports), wall."""
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh
from .common import load_json, ratio_goal

CACHE_VARIABLES = {"triton": "TRITON_CACHE_DIR", "inductor": "TORCHINDUCTOR_CACHE_DIR", "cuda": "CUDA_CACHE_PATH"}
# Qwen2.5-0.5B's dimensions (its config), three graphs: the workload of issue 32.
MODEL_ARGS = ("--layers", "24", "--hidden", "896", "--heads", "14", "--kv-heads", "2", "--vocab", "151936",
              "--prompt", "64", "--decode", "3")
BUNDLE_KINDS = "[triton, dynamo, cuda, pycache]"
BUNDLE_MODES = ("capture_root", "any_path")


class TorchCompile(Case):
    name = "torch_compile"
    title = "torch.compile of Qwen2ForCausalLM (transformers, three graphs) by cache state"
    primary = "compile_affected_s"
    modes = ("cold", "warm", "megacache", "capture_root", "any_path")
    ratios = (("any_path/warm", "any_path", "warm"), ("capture_root/warm", "capture_root", "warm"),
              ("any_path/megacache", "any_path", "megacache"), ("any_path/capture_root", "any_path", "capture_root"))
    rounds_quick = 1
    rounds_full = 3

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
        return ["python3", ctx.repo / "bench/command/qwen2_compile_warmup.py", *MODEL_ARGS, "--precision", dtype,
                *extra]

    def fresh_dirs(self, base):
        for d in CACHE_VARIABLES:
            (base / d).mkdir(parents=True, exist_ok=True)
        return {v: base / d for d, v in CACHE_VARIABLES.items()} | {"CUDA_CACHE_DISABLE": "0"}

    def manifest(self, ctx, dtype):
        argv = ", ".join(json.dumps(str(a)) for a in self.argv(ctx, dtype)[:-1])
        return ("version: 1\nmodels:\n  - name: qwen2\n    command:\n"
                f"      argv: [{argv}, \"{{precision}}\"]\n"
                f"      timeout: 30m\n      kinds: {BUNDLE_KINDS}\n"
                f"precisions: [{dtype}]\ntargets: [{self.target(ctx)}]\nbundle:\n  channel: bench\n  expires: 90d\n")

    @staticmethod
    def sample_root_name(dtype, mode):
        return f"cases/tc-{dtype}-{mode}/root"

    def prepare(self, ctx, variant):
        dtype = variant.split()[1]
        fill = ctx.scratch(f"cases/tc-{dtype}-fill")
        blob = fill / "megacache.bin"
        run_fresh(self.argv(ctx, dtype, "--save-megacache", blob),
                  env=clean_environment(self.fresh_dirs(fill / "caches"))).check()
        manifest = self.manifest(ctx, dtype)
        ctx.key()  # made once, before the builds run side by side
        # capture_root: captured where its samples run; any_path: in the
        # build's own work directory, its samples elsewhere. The two builds
        # run at once (their times are not figures).
        builds = {"capture_root": ("--capture-root", ctx.work / self.sample_root_name(dtype, "capture_root")),
                  "any_path": ()}
        with ThreadPoolExecutor(max_workers=len(builds)) as pool:
            futures = {mode: pool.submit(ctx.bundle_for, manifest, f"cases/tc-{dtype}-build-{mode}", extra)
                       for mode, extra in builds.items()}
            bundles = {mode: future.result() for mode, future in futures.items()}
        roots = {mode: ctx.installed_root(bundles[mode][0], f"cases/tc-{dtype}-installed-{mode}")
                 for mode in BUNDLE_MODES}
        self.prepared[variant] = (dtype, fill / "caches", blob, roots)

    def target(self, ctx):
        listing = ctx.prewarm_json("targets", "--json")
        runnable = [t["name"] for t in listing["targets"]
                    if t["vendor"] == "nvidia" and t.get("host", {}).get("strategy") == "run"]
        if not runnable:
            raise BenchError("no NVIDIA registry target is runnable on this host (prewarm targets)")
        return runnable[0]

    def sample(self, ctx, variant, mode, round_):
        dtype, fill, blob, roots = self.prepared[variant]
        base = ctx.scratch(f"cases/tc-{dtype}-sample")
        if mode in BUNDLE_MODES:
            # any_path's copy lands where no build captured.
            run = ctx.exec_under(ctx.copy_tree(roots[mode], self.sample_root_name(dtype, mode)),
                                 self.argv(ctx, dtype), env={"CUDA_CACHE_DISABLE": "0"})
        elif mode == "warm":
            run = run_fresh(self.argv(ctx, dtype), env=clean_environment(
                self.fresh_dirs(ctx.copy_tree(fill, f"cases/tc-{dtype}-sample/caches"))))
        else:
            extra = ("--load-megacache", blob) if mode == "megacache" else ()
            run = run_fresh(self.argv(ctx, dtype, *extra), env=clean_environment(self.fresh_dirs(base / "caches")))
        out = load_json(run.check().stdout.strip().splitlines()[-1])
        loaded = out.get("megacache_load_s", 0.0)
        return {"compile_affected_s": out["first_compiled_call_s"] + loaded + out["decode_s"],
                "torch_compile_s": out["compile_s"],
                "first_call_s": out["first_call_s"] + loaded,
                "token_1_from_start_s": out["first_result_s"],
                "token_n_from_start_s": out["first_result_s"] + out["decode_s"],
                "wall_s": run.seconds, "frames_traced": out["frames_traced"], "max_rss_mib": run.max_rss_mib}

    def goals(self, result):
        return [
            ratio_goal(result, "compile-affected total through the bundle at any path <= 0.15x warm in place",
                       "<= 0.15", "any_path", "warm", lambda r: r <= 0.15),
            ratio_goal(result, "first token from process start through the bundle at any path <= 0.5x warm in place",
                       "<= 0.5", "any_path", "warm", lambda r: r <= 0.5, metric="token_1_from_start_s"),
            ratio_goal(result, "the bundle at any path no slower than at its capture root", "<= 1.1", "any_path",
                       "capture_root", lambda r: r <= 1.1),
        ]

    def notes(self, ctx):
        return ["compile_affected_s: torch.compile() plus every compiled call (prefill and decode steps; Mega-Cache:"
                " plus its load); token_*_from_start_s count from the script's start, before its imports;"
                " wall_s adds interpreter start and exit."]
