# SPDX-License-Identifier: Apache-2.0
"""(d) `prewarm build` wall time: a run job on this host's device and ocloc
AOT jobs for absent Intel targets, each at --jobs 1 and --jobs 2 (fresh
process and output directory per sample)."""
import shutil

from ..case import Case
from ..measure import clean_environment, run_fresh
from .common import builtin_manifest, ratio_goal, tiny_manifest


class BuildTime(Case):
    name = "build_time"
    title = "prewarm build: run vs AOT, --jobs 1 vs 2"
    primary = "seconds"
    modes = ("jobs1", "jobs2")
    ratios = (("jobs1/jobs2", "jobs1", "jobs2"),)
    rounds_quick = 1
    rounds_full = 3

    def unavailable(self, ctx):
        return None if ctx.has_pocl() else "the run jobs need the PoCL device"

    def variants(self, ctx):
        aot = bool(shutil.which("ocloc"))
        if ctx.quick:
            return ["run gptq-linear fp16"] + (["aot 1 target"] if aot else [])
        return ["run qwen2.5-0.5b fp32,fp16,int8"] + (["aot 1 target", "aot 3 targets"] if aot else [])

    def manifest(self, variant):
        if variant == "run gptq-linear fp16":
            return tiny_manifest()
        if variant.startswith("run "):
            return builtin_manifest("qwen2.5-0.5b", "fp32, fp16, int8", ["cpu"])
        targets = ["arc-a380"] if variant == "aot 1 target" else ["arc-a380", "arc-a770", "iris-xe"]
        return builtin_manifest("qwen2.5-0.5b", "fp32, fp16, int8", targets)

    def sample(self, ctx, variant, mode, round_):
        base = ctx.scratch(f"cases/bt-{variant.replace(' ', '-').replace(',', '')}-{mode}")
        (base / "manifest.yaml").write_text(self.manifest(variant))
        run = run_fresh([ctx.prewarm, "build", base / "manifest.yaml", "--key", f"{ctx.key()}.key", "--out",
                         base / "bundle", "--serial", ctx.next_serial(), "--jobs", mode[-1]],
                        env=clean_environment(), cwd=base).check()
        return {"seconds": run.seconds, "max_rss_mib": run.max_rss_mib}

    def goals(self, result):
        aot = [v for v in result.variants() if v.startswith("aot")]
        return [ratio_goal(result, "AOT >= 1.8x from 1 to 2 jobs", ">= 1.8", "jobs1", "jobs2", lambda r: r >= 1.8,
                           variants=aot, why="2-core machine: the ceiling is 2x")] if aot else []
