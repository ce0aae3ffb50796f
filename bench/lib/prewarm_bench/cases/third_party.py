# SPDX-License-Identifier: Apache-2.0
"""(a) Third-party OpenCL programs (Debian's clpeak and hashcat, a CLBlast
GEMM client, pyopencl with its own cache off), start to exit in a fresh
process, on every OpenCL device this host has (PoCL; NVIDIA OpenCL on a GPU
machine), by cache state:

  cold         empty driver cache (POCL_CACHE_DIR / CUDA_CACHE_PATH) and
               empty program caches (XDG_CACHE_HOME)
  driver       the driver's cache (and hashcat's own) as one earlier run
               left them: warm in place
  installed    `prewarm build` (command workload; kinds: the driver's cache,
               hashcat's own as a custom cache) -> `prewarm-runtime install`
               -> each sample on a copy of the root through `prewarm-runtime exec`
  layer        the OpenCL layer (runtime/layer) serving program binaries:
               `prewarm build` with kinds [programs] (the layer records) ->
               install -> exec, which turns the layer on in serve mode; the
               driver's cache empty
  layer_empty  the layer on in serve mode over an empty store, driver cache
               empty: what the layer costs when it has nothing to serve
               (compared with cold)

hashcat on PoCL compiles for about 5 minutes per cold sample: it runs only
when --variants names it (`bench/run --only third_party --variants hashcat`);
on NVIDIA it is part of every full run. --quick: clpeak on PoCL, cold and
layer_empty only (no bundle is built)."""
import re
import shutil
import subprocess

from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh
from ..results import Goal
from .common import load_json, ratio_goal

# Driver cache variable, target and `prewarm build` kind per device.
DEVICES = {
    "pocl": {"platform": "Portable Computing Language", "variable": "POCL_CACHE_DIR", "target": "cpu",
             "kind": "pocl", "extra_env": {}},
    "nvidia": {"platform": "NVIDIA CUDA", "variable": "CUDA_CACHE_PATH", "target": None, "kind": "cuda",
               "extra_env": {"CUDA_CACHE_DISABLE": "0"}},
}
# MD5 of "abc" by a 3-letter mask (manifests/examples/hashcat.yaml): the
# kernels depend on the hash mode, attack mode and -O, not on the hash.
HASHCAT = ["hashcat", "-m", "0", "-a", "3", "--force", "--potfile-disable", "-O", "--quiet",
           "900150983cd24fb0d6963f7d28e17f72", "?l?l?l"]


class ThirdParty(Case):
    name = "third_party"
    title = "third-party OpenCL programs: start to exit by cache state, bundle, OpenCL layer"
    primary = "wall_s"
    modes = ("cold", "driver", "installed", "layer", "layer_empty")
    ratios = (("cold/installed", "cold", "installed"), ("installed/driver", "installed", "driver"),
              ("layer/driver", "layer", "driver"), ("layer_empty/cold", "layer_empty", "cold"))
    rounds_quick = 1
    rounds_full = 3

    def __init__(self):
        self.prepared = {}
        self._notes = []

    # -- what runs here ---------------------------------------------------------
    def unavailable(self, ctx):
        if not self._platforms(ctx):
            return "no OpenCL platform (clinfo -l): PoCL is pocl-opencl-icd"
        return None

    def _platforms(self, ctx):
        """Device name -> platform index (the order clinfo -l and the ICD loader use)."""
        found = {}
        for line in ctx.opencl_platforms().splitlines():
            m = re.match(r"Platform #(\d+): (.*)", line.strip())
            for device, spec in DEVICES.items():
                if m and spec["platform"] in m.group(2) and device not in found:
                    found[device] = int(m.group(1))
        return found

    def _programs(self, ctx):
        programs = []
        if shutil.which("clpeak"):
            programs.append("clpeak")
        if self._clblast_client(ctx):
            programs.append("clblast")
        if subprocess.run(["/usr/bin/python3", "-c", "import pyopencl, numpy"], capture_output=True).returncode == 0:
            programs.append("pyopencl")
        if shutil.which("hashcat"):
            programs.append("hashcat")
        return programs

    def _clblast_client(self, ctx):
        path = ctx.build / "tests/integration/real_programs/clblast_client"
        return path if path.exists() else None

    def variants(self, ctx):
        devices, programs = self._platforms(ctx), self._programs(ctx)
        if ctx.quick:
            return ["clpeak pocl"] if "pocl" in devices and "clpeak" in programs else []
        out = []
        for device in devices:
            for program in programs:
                if program == "hashcat" and device == "pocl" and not re.search(ctx.variant_filter or "^$", "hashcat"):
                    continue  # ~5 min per cold sample: asked for by name only
                out.append(f"{program} {device}")
        return out

    def _layer(self, ctx):
        path = ctx.build / "runtime/layer/libprewarm_opencl_layer.so"
        if not path.exists():
            raise BenchError(f"the OpenCL layer is not built: {path} (cmake --build {ctx.build} --target prewarm_opencl_layer)")
        return path

    # -- the program's command line and environment ----------------------------
    def argv(self, ctx, program, device, platform):
        if program == "clpeak":
            return ["clpeak", "-p", str(platform), "-d", "0", "--kernel-latency"]
        if program == "clblast":
            return [str(self._clblast_client(ctx)), "--platform", DEVICES[device]["platform"], "gemm"]
        if program == "pyopencl":
            return ["/usr/bin/python3", str(ctx.repo / "manifests/examples/pyopencl_warmup.py")]
        # hashcat: the CPU device on PoCL; on NVIDIA its OpenCL backend (not CUDA).
        return HASHCAT + (["-D", "1"] if device == "pocl" else ["-D", "2", "--backend-ignore-cuda"])

    def program_env(self, program, platform):
        if program == "pyopencl":
            # pyopencl's own binary cache off: what is measured is the driver's.
            # The platform alone: pyopencl takes its first device without asking
            # (a device index left over on a one-device platform is an error).
            return {"PYOPENCL_CTX": f"{platform}", "PYOPENCL_NO_CACHE": "1"}
        return {}

    def _target(self, ctx, device):
        if DEVICES[device]["target"]:
            return DEVICES[device]["target"]
        listing = ctx.prewarm_json("targets", "--json")
        for t in listing["targets"]:
            if t["vendor"] == "nvidia" and t.get("host", {}).get("strategy") == "run":
                return t["name"]
        raise BenchError("no NVIDIA registry target is runnable on this host (prewarm targets)")

    def manifest(self, ctx, program, device, platform, kinds):
        argv = ", ".join(f'"{a}"' for a in self.argv(ctx, program, device, platform))
        env = self.program_env(program, platform) | DEVICES[device]["extra_env"]
        env_yaml = "{" + ", ".join(f'{k}: "{v}"' for k, v in env.items()) + "}"
        caches = ("      caches:\n        - name: hashcat\n          variable: XDG_CACHE_HOME\n"
                  "          subdir: hashcat\n") if program == "hashcat" and kinds != ["programs"] else ""
        return ("version: 1\nmodels:\n"
                f"  - name: {program}\n    command:\n      argv: [{argv}]\n      env: {env_yaml}\n{caches}"
                f"      kinds: [{', '.join(kinds)}]\n      verify: warn\n      timeout: 60m\n"
                f"precisions: [fp32]\ntargets: [{self._target(ctx, device)}]\n"
                "bundle:\n  channel: bench\n  expires: 90d\n")

    # -- preparation: bundles, roots, a filled driver cache --------------------
    def prepare(self, ctx, variant):
        program, device = variant.split()
        platform = self._platforms(ctx)[device]
        slug = variant.replace(" ", "-")
        spec = DEVICES[device]
        layer = self._layer(ctx)
        layer_env = {"PREWARM_OPENCL_LAYER": layer}
        if ctx.quick:
            # The smoke run: the modes that need no bundle (cold, the layer
            # over an empty store); real_programs.* and opencl_layer test the
            # bundles of these programs in CI.
            self.prepared[variant] = {"program": program, "device": device, "platform": platform, "layer": layer}
            return
        bundle, _, report = ctx.build_bundle(self.manifest(ctx, program, device, platform, [spec["kind"]]),
                                             f"cases/tp-{slug}-build")
        root = ctx.installed_root(bundle, f"cases/tp-{slug}-installed")
        layer_bundle, _, layer_report = ctx.build_bundle(self.manifest(ctx, program, device, platform, ["programs"]),
                                                         f"cases/tp-{slug}-layer-build", env=layer_env)
        layer_root = ctx.installed_root(layer_bundle, f"cases/tp-{slug}-layer-installed")
        if not any((layer_root / "programs").rglob("*")):
            raise BenchError("the layer recorded nothing for this program (no programs in the bundle)")
        fill = ctx.scratch(f"cases/tp-{slug}-fill")
        (fill / "driver").mkdir()
        (fill / "xdg").mkdir()
        self._run(ctx, program, device, platform, {spec["variable"]: fill / "driver", "XDG_CACHE_HOME": fill / "xdg"}).check()
        self.prepared[variant] = {"program": program, "device": device, "platform": platform, "root": root,
                                  "layer_root": layer_root, "fill": fill, "layer": layer}
        self._notes.append(f"{variant}: build hit proof: {hit_proof(report) or 'none'}; with kinds [programs]"
                           f" (the layer): {hit_proof(layer_report) or 'none'}")

    def _run(self, ctx, program, device, platform, env, root=None):
        env = {**self.program_env(program, platform), **DEVICES[device]["extra_env"], **env}
        argv = self.argv(ctx, program, device, platform)
        if root is not None:
            return ctx.exec_under(root, argv, env)
        return run_fresh(argv, env=clean_environment(env))

    # -- one sample ------------------------------------------------------------
    def sample(self, ctx, variant, mode, round_):
        p = self.prepared[variant]
        if ctx.quick and mode not in ("cold", "layer_empty"):
            return None
        program, device, platform = p["program"], p["device"], p["platform"]
        variable = DEVICES[device]["variable"]
        slug = variant.replace(" ", "-")
        base = ctx.scratch(f"cases/tp-{slug}-sample")
        empty = {variable: base / "driver", "XDG_CACHE_HOME": base / "xdg", "XDG_DATA_HOME": base / "data"}
        for d in empty.values():
            d.mkdir()
        if mode == "cold":
            run = self._run(ctx, program, device, platform, empty)
        elif mode == "driver":
            warm = ctx.copy_tree(p["fill"], f"cases/tp-{slug}-sample/warm")
            run = self._run(ctx, program, device, platform,
                            {**empty, variable: warm / "driver", "XDG_CACHE_HOME": warm / "xdg"})
        elif mode == "installed":
            root = ctx.copy_tree(p["root"], f"cases/tp-{slug}-sample/root")
            run = self._run(ctx, program, device, platform, empty, root=root)
        elif mode == "layer":
            root = ctx.copy_tree(p["layer_root"], f"cases/tp-{slug}-sample/root")
            run = self._run(ctx, program, device, platform, {**empty, "PREWARM_OPENCL_LAYER": p["layer"]}, root=root)
        else:  # layer_empty
            (base / "store").mkdir()
            run = self._run(ctx, program, device, platform,
                            {**empty, "OPENCL_LAYERS": p["layer"], "PREWARM_LAYER": "serve",
                             "PREWARM_PROGRAM_STORE": base / "store"})
        run.check()
        metrics = {"wall_s": run.seconds, "max_rss_mib": run.max_rss_mib}
        first = first_result_of(run.stdout)
        if first is not None:
            metrics["first_result_s"] = first
        return metrics

    def goals(self, result):
        compiled = [v for v in result.variants() if v.split()[0] in ("clblast", "hashcat")]
        out = [
            ratio_goal(result, "installed first result <= 1.1x driver-cache-warm (third-party programs)", "<= 1.1",
                       "installed", "driver", lambda r: r <= 1.1),
            ratio_goal(result, "installed >= 20x faster than cold where compilation dominates (CLBlast, hashcat)",
                       ">= 20", "cold", "installed", lambda r: r >= 20, variants=compiled,
                       why="clpeak and pyopencl spend most of their time running, not compiling"),
        ]
        overhead = [{"variant": v, "value": round(result.ratio(v, "layer_empty", "cold"), 3)}
                    for v in result.variants() if result.ratio(v, "layer_empty", "cold") is not None]
        out.append(Goal("layer overhead with nothing stored <= 2%", self.name, "layer_empty/cold <= 1.02", overhead,
                        all(x["value"] <= 1.02 for x in overhead) if overhead else None,
                        "a difference under 2% is inside the spread of the cold samples:"
                        " compare the min-max ranges, not only the medians"))
        return out

    def notes(self, ctx):
        # The runner asks before preparing; prepare() appends each variant's
        # hit proof lines to this same list.
        self._notes[:] = ["wall_s: the program's process from start to exit (through exec where the mode says);"
                          " first_result_s: what the program itself reports (CLBlast client, pyopencl), where it does."]
        return self._notes


def hit_proof(report):
    """The build report's hit-proof summary of the first job, when it has one."""
    for job in (report or {}).get("jobs", []):
        proof = (job.get("report") or {}).get("hit_proof") or {}
        if proof.get("line"):
            return proof["line"]
    return ""


def first_result_of(stdout):
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                value = load_json(line).get("first_result_s")
            except BenchError:
                return None
            return float(value) if isinstance(value, (int, float)) else None
    return None
