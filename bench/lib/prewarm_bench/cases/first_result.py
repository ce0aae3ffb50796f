# SPDX-License-Identifier: Apache-2.0
"""(a) Time to first result of prewarm's own engine (`prewarm run`) in a fresh
process, by cache state, for the presets x precisions, on every OpenCL device
this host can run (PoCL here; NVIDIA OpenCL on a GPU machine).

  cold       empty driver cache, no program store: every kernel compiles
  driver     the driver's own cache as one earlier run left it (warm in place)
  installed  `prewarm build` -> `prewarm-runtime install` -> each sample on a
             copy of the root through `prewarm-runtime exec`"""
from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh
from .common import builtin_manifest, load_json, ratio_goal, runnable_targets

# The driver cache each device kind fills, and how `prewarm run --device` finds it.
DEVICES = {"cpu": ("POCL_CACHE_DIR", "Portable"), "nvidia": ("CUDA_CACHE_PATH", "NVIDIA")}


class FirstResult(Case):
    name = "first_result"
    title = "prewarm run: time to first result by cache state (device path)"
    primary = "first_result_device_s"
    modes = ("cold", "driver", "installed")
    ratios = (("cold/installed", "cold", "installed"), ("installed/driver", "installed", "driver"))
    rounds_full = 3

    def __init__(self):
        self.prepared = {}

    def unavailable(self, ctx):
        if not (ctx.has_pocl() or ctx.has_nvidia_opencl()):
            return "no OpenCL device (PoCL: apt-get install pocl-opencl-icd)"
        return None

    def variants(self, ctx):
        targets = runnable_targets(ctx)
        if ctx.quick:
            return [f"{targets[0]} gptq-linear fp16"]
        precisions = ["fp32", "fp16", "int8"] + (["bf16"] if self._knows_bf16(ctx) else [])
        # Every precision of the decoder (the bulk of the kernels), one of each other preset.
        cases = [("qwen2.5-0.5b", p) for p in precisions] + [("lprnet", "fp32"), ("gptq-linear", "fp16")]
        return [f"{t} {m} {p}" for t in targets for m, p in cases]

    def _knows_bf16(self, ctx):
        probe = ctx.scratch("bf16-probe") / "m.yaml"
        probe.write_text(builtin_manifest("lprnet", "bf16", ["cpu"]))
        return run_fresh([ctx.prewarm, "plan", probe], env=clean_environment()).returncode == 0

    def _vendor(self, ctx, target):
        listing = ctx.prewarm_json("targets", "--json")
        return next(t["vendor"] for t in listing["targets"] if t["name"] == target)

    def prepare(self, ctx, variant):
        target, model, precision = variant.split()
        variable, device = DEVICES[self._vendor(ctx, target)]
        slug = variant.replace(" ", "-")
        bundle, _, _ = ctx.bundle_for(builtin_manifest(model, precision, [target]), f"cases/fr-{slug}-build")
        root = ctx.installed_root(bundle, f"cases/fr-{slug}-installed")
        fill = ctx.scratch(f"cases/fr-{slug}-fill") / "cache"
        fill.mkdir()
        self._run(ctx, model, precision, device, {variable: fill}).check()
        self.prepared[variant] = (model, precision, variable, device, root, fill)

    def _run(self, ctx, model, precision, device, env, root=None):
        argv = [ctx.prewarm, "run", model, "--precision", precision, "--device", device, "--json"]
        if variable_needs_enable(env):
            env = {**env, "CUDA_CACHE_DISABLE": "0"}
        if root is not None:
            return ctx.exec_under(root, argv, env)
        return run_fresh(argv, env=clean_environment(env))

    def sample(self, ctx, variant, mode, round_):
        model, precision, variable, device, root, fill = self.prepared[variant]
        slug = variant.replace(" ", "-")
        if mode == "installed":
            run = self._run(ctx, model, precision, device, {}, root=ctx.copy_tree(root, f"cases/fr-{slug}-sample"))
        else:
            cache = ctx.copy_tree(fill, f"cases/fr-{slug}-sample") if mode == "driver" else ctx.scratch(f"cases/fr-{slug}-sample")
            run = self._run(ctx, model, precision, device, {variable: cache})
        report = load_json(run.check().stdout)
        store = report.get("program_store", {})
        if mode == "installed" and store.get("misses", 0):
            raise BenchError(f"installed run compiled {store['misses']} programs: the bundle did not serve them")
        return {"first_result_device_s": report["seconds"]["first_result_device"],
                "first_result_s": report["seconds"]["first_result"], "wall_s": run.seconds,
                "max_rss_mib": run.max_rss_mib, "store_hits": store.get("hits", 0)}

    def goals(self, result):
        return [
            ratio_goal(result, "installed first result <= 1.1x driver-cache-warm", "<= 1.1", "installed", "driver",
                       lambda r: r <= 1.1),
            ratio_goal(result, "installed >= 20x faster than cold where compilation dominates", ">= 20", "cold",
                       "installed", lambda r: r >= 20,
                       why="the installed time is mostly the first forward pass itself, which no cache removes:"
                           " the ratio is bounded by the share of cold spent compiling (NVIDIA compiles"
                           " these kernels in about a second)"),
        ]

    def notes(self, ctx):
        return ["first_result_device_s: session open + compile + execute up to the first checked forward pass,"
                " measured inside the engine (what an engine that loads weights from disk waits for);"
                " wall_s: the whole process, with this synthetic engine's host-side checks."]


def variable_needs_enable(env):
    # Some images set CUDA_CACHE_DISABLE=1; a cache under test must be on.
    return "CUDA_CACHE_PATH" in env
