# SPDX-License-Identifier: Apache-2.0
"""(e) Bundle size per kind and target: what a bundle ships (tar.zst per
slice) and what it installs (files per kind), for a run bundle on this host's
device and an AOT bundle for absent Intel targets."""
import shutil

from ..case import Case
from .common import builtin_manifest, bundle_bytes, default_manifest, tiny_manifest


class BundleSize(Case):
    name = "bundle_size"
    title = "bundle size: shipped (tar.zst) and installed bytes"
    primary = "shipped_kib"
    unit = "KiB"
    modes = ("bytes",)
    rounds_quick = 1
    rounds_full = 1

    def __init__(self):
        self.bundles = {}

    def unavailable(self, ctx):
        return None if ctx.has_pocl() or ctx.has_nvidia_opencl() else "no OpenCL device to build a bundle on"

    def variants(self, ctx):
        names = ["run tiny"] if ctx.quick else ["run default manifest"]
        if shutil.which("ocloc"):
            names.append("aot arc-a380 + arc-a770")
        return names

    def prepare(self, ctx, variant):
        if variant == "run tiny":
            text = tiny_manifest()
        elif variant.startswith("run"):
            text = default_manifest(ctx)
        else:
            text = builtin_manifest("gptq-linear" if ctx.quick else "qwen2.5-0.5b",
                                    "fp16" if ctx.quick else "fp32, fp16, int8", ["arc-a380", "arc-a770"])
        self.bundles[variant], _, _ = ctx.bundle_for(text, f"cases/bs-{variant.split()[0]}-build")

    def sample(self, ctx, variant, mode, round_):
        slices, kinds = bundle_bytes(self.bundles[variant])
        metrics = {"shipped_kib": sum(slices.values()) / 1024, "installed_kib": sum(kinds.values()) / 1024,
                   "slices": len(slices)}
        metrics.update({f"installed_{k}_kib": v / 1024 for k, v in kinds.items()})
        metrics.update({f"shipped_slice_{i}_kib": v / 1024 for i, (_, v) in enumerate(sorted(slices.items()))})
        return metrics

    def notes(self, ctx):
        return ["Not timed: one reading per bundle. shipped = the slices' tar.zst; installed = the files' sizes per"
                " kind as the signed manifest lists them (programs = prewarm's store, AOT zebins included)."]
