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
  dynamo-pycache  (variant no-bytecode) kinds [dynamo, pycache]: the same
             plus the Python bytecode of everything the run imports

Variants: default (the venv as pip left it: every mode reads its .pyc) and
no-bytecode (an image without bytecode, as the GPU machine's: every mode runs
with PYTHONDONTWRITEBYTECODE=1 and an empty PYTHONPYCACHEPREFIX, so Python
compiles every module it imports, except where exec exports the installed
pycache tree; inductor is left out there).

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
    modes = ("cold", "warm", "megacache", "inductor", "dynamo", "dynamo-pycache")
    ratios = (("dynamo/warm", "dynamo", "warm"), ("dynamo/megacache", "dynamo", "megacache"),
              ("dynamo/cold", "dynamo", "cold"), ("inductor/warm", "inductor", "warm"),
              ("dynamo-pycache/warm", "dynamo-pycache", "warm"),
              ("dynamo-pycache/megacache", "dynamo-pycache", "megacache"),
              ("dynamo-pycache/dynamo", "dynamo-pycache", "dynamo"))
    # Which bundles each variant builds, in build order (mode -> kinds).
    bundles = {"default": {"inductor": "inductor", "dynamo": "dynamo"},
               "no-bytecode": {"dynamo": "dynamo", "dynamo-pycache": "dynamo, pycache"}}
    rounds_quick = 1
    rounds_full = 3

    def __init__(self):
        self.prepared = {}

    def variants(self, ctx):
        return ["default"] if ctx.quick else ["default", "no-bytecode"]

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
        manifest_env = '{HF_HUB_OFFLINE: "1"}'
        if variant == "no-bytecode":
            # Stays empty: Python reads no bytecode there and, told not to,
            # writes none; exec replaces it with the installed pycache tree.
            empty = ctx.scratch("cases/tcc-no-bytecode")
            env |= {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": empty}
            manifest_env = '{HF_HUB_OFFLINE: "1", PYTHONDONTWRITEBYTECODE: "1"}'
        fill = ctx.scratch(f"cases/tcc-fill-{variant}")
        blob = fill / "megacache.bin"
        (fill / "inductor").mkdir(parents=True, exist_ok=True)
        run_fresh(self.argv(ctx, "--save-megacache", blob),
                  env=clean_environment(env | {"TORCHINDUCTOR_CACHE_DIR": fill / "inductor"})).check()
        roots = {}
        for mode, kinds in self.bundles[variant].items():
            manifest = ("version: 1\nmodels:\n  - name: tiny-qwen2\n    command:\n"
                        f"      argv: [{python}, {ctx.repo / 'tests/integration/torch/tiny_compile.py'}]\n"
                        f"      env: {manifest_env}\n      timeout: 20m\n      kinds: [{kinds}]\n"
                        "precisions: [fp32]\ntargets: [cpu]\nbundle:\n  channel: bench\n  expires: 90d\n")
            tag = f"{variant}-{mode}"
            bundle, _, _ = ctx.build_bundle(manifest, f"cases/tcc-{tag}-build", env={"PREWARM_PYTHON": python})
            # The install checks the slice's framework.* requirements with
            # this Python (PREWARM_PYTHON; the bench strips PREWARM_*).
            root = ctx.scratch(f"cases/tcc-{tag}-installed") / "root"
            ctx.install(bundle, root, env={"PREWARM_PYTHON": python}).check()
            roots[mode] = root
        self.prepared[variant] = (env, fill / "inductor", blob, roots)

    def sample(self, ctx, variant, mode, round_):
        env, fill, blob, roots = self.prepared[variant]
        if mode in ("inductor", "dynamo", "dynamo-pycache") and mode not in roots:
            return None  # not a mode of this variant
        audit = None
        if mode in roots:
            audit = ctx.scratch(f"cases/tcc-sample-{variant}-{mode}-{round_}") / "audit.json"
            root = ctx.copy_tree(roots[mode], f"cases/tcc-sample-{variant}-{mode}/root")
            run = run_fresh([ctx.runtime, "exec", "--root", root, "--audit", audit, "--", *self.argv(ctx)],
                            env=clean_environment(env))
        elif mode == "warm":
            cache = ctx.copy_tree(fill, f"cases/tcc-sample-{variant}-warm/inductor")
            run = run_fresh(self.argv(ctx), env=clean_environment(env | {"TORCHINDUCTOR_CACHE_DIR": cache}))
        else:
            cache = ctx.scratch(f"cases/tcc-sample-{variant}-{mode}-{round_}") / "inductor"
            cache.mkdir(parents=True, exist_ok=True)
            extra = ("--load-megacache", blob) if mode == "megacache" else ()
            run = run_fresh(self.argv(ctx, *extra), env=clean_environment(env | {"TORCHINDUCTOR_CACHE_DIR": cache}))
        out = load_json(run.check().stdout.strip().splitlines()[-1])
        if mode.startswith("dynamo") and out["dynamo_cache_hit"] != 1:
            raise BenchError(f"{mode}: the precompiled frame was not loaded: {out}")
        metrics = {"first_compiled_call_s": out["first_compiled_call_s"] + out.get("megacache_load_s", 0.0),
                   "first_result_s": out["first_result_s"], "compile_s": out["compile_s"],
                   "import_s": out["import_s"], "wall_s": run.seconds, "max_rss_mib": run.max_rss_mib}
        if mode == "dynamo-pycache":
            kinds = {k["kind"]: k for k in load_json(audit.read_text())["kinds"]}
            if "pycache" not in kinds or kinds["pycache"]["new_files"] != 0:
                raise BenchError(f"{mode}: the installed bytecode was not all reused: {kinds.get('pycache')}")
            metrics["pycache_reused_files"] = kinds["pycache"]["reused_files"]
        return metrics

    def goals(self, result):
        # The GPU goals (first compiled call <= 0.3x warm in place,
        # first token from process start <= 0.8x), measured on the CPU for an
        # image without bytecode; there Inductor's ISA probe, paid in every
        # fresh process, is most of the first compiled call.
        return [
            ratio_goal(result, "CPU: first compiled call through the dynamo bundle < warm in place", "< 1.0",
                       "dynamo", "warm", lambda r: r < 1.0),
            ratio_goal(result, "CPU: first compiled call through the dynamo bundle < Mega-Cache", "< 1.0",
                       "dynamo", "megacache", lambda r: r < 1.0),
            ratio_goal(result, "CPU, image without bytecode: first compiled call through dynamo+pycache vs warm "
                       "in place (the GPU goal)", "<= 0.3", "dynamo-pycache", "warm", lambda r: r <= 0.3),
            ratio_goal(result, "CPU, image without bytecode: first token from process start through dynamo+pycache "
                       "vs warm in place (the GPU goal)", "<= 0.8", "dynamo-pycache", "warm", lambda r: r <= 0.8,
                       metric="first_result_s"),
        ]

    def notes(self, ctx):
        return ["first_compiled_call_s: torch.compile() (where a precompiled frame is loaded) plus the first forward,"
                " inside the process (Mega-Cache: + its load). On the CPU every mode also pays Inductor's ISA probe:"
                " a g++ build and a Python process importing torch per candidate instruction set, cached only in part.",
                "first_result_s adds the imports (torch, transformers) and the model's construction."]
