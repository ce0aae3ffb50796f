# SPDX-License-Identifier: Apache-2.0
"""(c) Start-up that costs nothing (issue 32, item 4): a repeated `install` of a
bundle already installed, and `prewarm-runtime exec -- /bin/true` against
/bin/true alone, with a custom cache bundle of 128 and of 10,000 files (the
cost must not grow with the files), and the shared libraries each loads.

Set PREWARM_BENCH_BASELINE_RUNTIME to another prewarm-runtime (an earlier
build) to measure it side by side: modes *_baseline, each on a root that
binary installed. The shell twin for machines without this harness:
bench/startup/startup_bench.sh."""
import os
import re

from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh
from .common import startup_goals

BASELINE_VARIABLE = "PREWARM_BENCH_BASELINE_RUNTIME"


def startup_manifest(tree):
    """A command workload whose custom cache is TREE's files: copied in when
    the cache is empty, read back otherwise (what the hit proof sees)."""
    script = (f'if [ -e "$CLFFT_CACHE_PATH/d0000" ]; then cat "$CLFFT_CACHE_PATH"/d*/* > /dev/null; '
              f'else cp -R {tree}/. "$CLFFT_CACHE_PATH"/; fi')
    return ("version: 1\nmodels:\n  - name: startup\n    command:\n"
            f"      argv: [{script!r}]\n      shell: true\n      kinds: []\n"
            "      caches: [{name: startup, variable: CLFFT_CACHE_PATH}]\n"
            "precisions: [fp32]\ntargets: [cpu]\nbundle:\n  channel: bench\n  expires: 90d\n")


def loaded_libraries(run):
    """Shared objects the dynamic loader opened (LD_DEBUG=files), every process."""
    return len(re.findall(r"^\s*\d+:\s+file=\S+\s+\[\d+\];\s+needed by", run.stderr, re.MULTILINE))


class RuntimeStartup(Case):
    name = "runtime_startup"
    title = "prewarm-runtime: a no-op install and exec, by installed files"
    primary = "wall_ms"
    unit = "ms"
    modes = ("direct", "exec", "install_noop", "exec_baseline", "install_noop_baseline")
    rounds_quick = 2
    rounds_full = 9

    def __init__(self):
        self.prepared = {}

    def unavailable(self, ctx):
        return None if ctx.has_pocl() else "no PoCL device for the cpu target's custom cache bundle"

    def variants(self, ctx):
        return ["128 files"] if ctx.quick else ["128 files", "10000 files"]

    def prepare(self, ctx, variant):
        files = int(variant.split()[0])
        base = ctx.scratch(f"cases/startup-{files}")
        tree = base / "tree"
        for i in range(files):
            d = tree / f"d{i // 100:04d}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"entry{i}.bin").write_bytes(os.urandom(256))
        bundle, _, _ = ctx.bundle_for(startup_manifest(tree), f"cases/startup-{files}-build")
        root = ctx.installed_root(bundle, f"cases/startup-{files}-installed")
        baseline = os.environ.get(BASELINE_VARIABLE)
        baseline_root = None
        if baseline:
            baseline_root = ctx.scratch(f"cases/startup-{files}-baseline") / "root"
            run_fresh([baseline, "install", bundle, "--trust", f"{ctx.key()}.pub", "--root", baseline_root],
                      env=clean_environment()).check()
        self.prepared[variant] = (bundle, root, baseline, baseline_root)

    def sample(self, ctx, variant, mode, round_):
        bundle, root, baseline, baseline_root = self.prepared[variant]
        runtime, where = (baseline, baseline_root) if mode.endswith("_baseline") else (ctx.runtime, root)
        if runtime is None:
            return None  # no baseline given
        env = clean_environment({"LD_DEBUG": "files"})
        if mode == "direct":
            run = run_fresh(["/bin/true"], env=env)
        elif mode.startswith("exec"):
            run = run_fresh([runtime, "exec", "--root", where, "--", "/bin/true"], env=env)
        else:
            run = run_fresh([runtime, "install", bundle, "--trust", f"{ctx.key()}.pub", "--root", where], env=env)
            if "already installed" not in run.stdout:
                raise BenchError(f"not a no-op install: {run.stdout.strip()}")
        run.check()
        return {"wall_ms": run.seconds * 1000, "libraries": loaded_libraries(run)}

    def goals(self, result):
        return startup_goals(result, "no-op install <= 20 ms at 10,000 files", 20, 3)

    def notes(self, ctx):
        baseline = os.environ.get(BASELINE_VARIABLE)
        return ["direct: /bin/true alone; exec: prewarm-runtime exec --root ROOT -- /bin/true; install_noop: "
                "prewarm-runtime install of the bundle already installed. libraries: shared objects the dynamic "
                "loader opened during the run (LD_DEBUG=files; /bin/true itself opens 1, libc).",
                f"*_baseline: {baseline}" if baseline else f"no baseline ({BASELINE_VARIABLE} unset)"]
