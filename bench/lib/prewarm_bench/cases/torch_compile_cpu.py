# SPDX-License-Identifier: Apache-2.0
"""(CPU) First compiled call of a small transformers model under torch.compile
in a fresh process, on the CPU (tests/integration/torch/tiny_compile.py:
Qwen2ForCausalLM, 2 layers, hidden 64, fp32, random weights, logits checked
against eager; Inductor's C++ compiled by g++), by cache state:

  cold       empty TORCHINDUCTOR_CACHE_DIR
  warm       the directory as one earlier run left it (warm in place)
  megacache  empty directory + torch.compiler.load_cache_artifacts() of the
             blob an earlier run saved (PyTorch's own portable cache)
  inductor   `prewarm build` (kind inductor) -> install -> exec
  dynamo     `prewarm build` (kind dynamo: Inductor's cache plus Dynamo's
             precompiled frame) -> install -> exec: no tracing

The Python is setup.sh's pinned torch environment (TORCH_PYTHON, else the
newest complete one under ~/.cache/prewarm/python)."""
import os
from pathlib import Path

from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh
from .common import load_json, ratio_goal


def torch_python():
    explicit = os.environ.get("TORCH_PYTHON")
    if explicit:
        return Path(explicit)
    root = Path(os.environ.get("PREWARM_PYTHON_ENV_ROOT",
                               Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "prewarm/python"))
    envs = sorted((p for p in root.glob("venv-*") if (p / ".complete").exists()), key=lambda p: p.stat().st_mtime)
    return envs[-1] / "bin/python" if envs else None


class TorchCompileCpu(Case):
    name = "torch_compile_cpu"
    title = "torch.compile first compiled call of a small Qwen2ForCausalLM on the CPU by cache state"
    primary = "first_compiled_call_s"
    modes = ("cold", "warm", "megacache", "inductor", "dynamo")
    ratios = (("dynamo/warm", "dynamo", "warm"), ("dynamo/megacache", "dynamo", "megacache"),
              ("dynamo/cold", "dynamo", "cold"), ("inductor/warm", "inductor", "warm"))
    rounds_quick = 1
    rounds_full = 3

    def __init__(self):
        self.prepared = None

    def unavailable(self, ctx):
        python = torch_python()
        if python is None or not python.exists():
            return "no torch environment (./setup.sh test makes it; or set TORCH_PYTHON)"
        if run_fresh([python, "-c", "import torch, transformers"]).returncode:
            return f"{python} cannot import torch and transformers"
        return None

    def argv(self, ctx, *extra):
        return [torch_python(), ctx.repo / "tests/integration/torch/tiny_compile.py", *extra]

    def prepare(self, ctx, variant):
        python = torch_python()
        env = {"HF_HUB_OFFLINE": "1", "PREWARM_PYTHON": python}
        fill = ctx.scratch("cases/tcc-fill")
        blob = fill / "megacache.bin"
        (fill / "inductor").mkdir(parents=True, exist_ok=True)
        run_fresh(self.argv(ctx, "--save-megacache", blob),
                  env=clean_environment(env | {"TORCHINDUCTOR_CACHE_DIR": fill / "inductor"})).check()
        roots = {}
        for kind in ("inductor", "dynamo"):
            manifest = ("version: 1\nmodels:\n  - name: tiny-qwen2\n    command:\n"
                        f"      argv: [{python}, {ctx.repo / 'tests/integration/torch/tiny_compile.py'}]\n"
                        f"      env: {{HF_HUB_OFFLINE: \"1\"}}\n      timeout: 20m\n      kinds: [{kind}]\n"
                        "precisions: [fp32]\ntargets: [cpu]\nbundle:\n  channel: bench\n  expires: 90d\n")
            bundle, _, _ = ctx.build_bundle(manifest, f"cases/tcc-{kind}-build", env={"PREWARM_PYTHON": python})
            # The install checks the slice's framework.* requirements with
            # this Python (PREWARM_PYTHON; the bench strips PREWARM_*).
            root = ctx.scratch(f"cases/tcc-{kind}-installed") / "root"
            ctx.install(bundle, root, env={"PREWARM_PYTHON": python}).check()
            roots[kind] = root
        self.prepared = (env, fill / "inductor", blob, roots)

    def sample(self, ctx, variant, mode, round_):
        env, fill, blob, roots = self.prepared
        if mode in roots:
            run = ctx.exec_under(ctx.copy_tree(roots[mode], f"cases/tcc-sample-{mode}/root"), self.argv(ctx), env=env)
        elif mode == "warm":
            cache = ctx.copy_tree(fill, "cases/tcc-sample-warm/inductor")
            run = run_fresh(self.argv(ctx), env=clean_environment(env | {"TORCHINDUCTOR_CACHE_DIR": cache}))
        else:
            cache = ctx.scratch(f"cases/tcc-sample-{mode}-{round_}") / "inductor"
            cache.mkdir(parents=True, exist_ok=True)
            extra = ("--load-megacache", blob) if mode == "megacache" else ()
            run = run_fresh(self.argv(ctx, *extra), env=clean_environment(env | {"TORCHINDUCTOR_CACHE_DIR": cache}))
        out = load_json(run.check().stdout.strip().splitlines()[-1])
        if mode == "dynamo" and out["dynamo_cache_hit"] != 1:
            raise BenchError(f"dynamo: the precompiled frame was not loaded: {out}")
        return {"first_compiled_call_s": out["first_compiled_call_s"] + out.get("megacache_load_s", 0.0),
                "first_result_s": out["first_result_s"], "compile_s": out["compile_s"],
                "wall_s": run.seconds, "max_rss_mib": run.max_rss_mib}

    def goals(self, result):
        return [
            ratio_goal(result, "CPU: first compiled call through the dynamo bundle < warm in place", "< 1.0",
                       "dynamo", "warm", lambda r: r < 1.0),
            ratio_goal(result, "CPU: first compiled call through the dynamo bundle < Mega-Cache", "< 1.0",
                       "dynamo", "megacache", lambda r: r < 1.0),
        ]

    def notes(self, ctx):
        return ["first_compiled_call_s: torch.compile() (where a precompiled frame is loaded) plus the first forward,"
                " inside the process (Mega-Cache: + its load). On the CPU every mode also pays Inductor's ISA probe:"
                " a g++ build and a Python process importing torch per candidate instruction set, cached only in part.",
                "first_result_s adds the imports (torch, transformers) and the model's construction."]
