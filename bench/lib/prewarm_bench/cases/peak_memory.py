# SPDX-License-Identifier: Apache-2.0
"""(f) Peak memory (largest resident set in the process tree, wait4) of the
builder, the installer, verify, and exec."""
from ..case import Case
from ..measure import clean_environment, run_fresh
from .common import default_manifest, tiny_manifest


class PeakMemory(Case):
    name = "peak_memory"
    title = "peak resident memory: build, verify, install, exec"
    primary = "max_rss_mib"
    unit = "MiB"
    modes = ("build", "verify", "install", "exec")
    rounds_quick = 1
    rounds_full = 3

    def unavailable(self, ctx):
        return None if ctx.has_pocl() or ctx.has_nvidia_opencl() else "no OpenCL device to build a bundle on"

    def variants(self, ctx):
        return ["tiny manifest"] if ctx.quick else ["default manifest"]

    def prepare(self, ctx, variant):
        self.text = tiny_manifest() if ctx.quick else default_manifest(ctx)
        self.bundle, _, _ = ctx.bundle_for(self.text, f"cases/pm-{variant.split()[0]}-build")
        self.root = ctx.installed_root(self.bundle, f"cases/pm-{variant.split()[0]}-installed")

    def sample(self, ctx, variant, mode, round_):
        if mode == "build":
            base = ctx.scratch("cases/pm-build-sample")
            (base / "manifest.yaml").write_text(self.text)
            run = run_fresh([ctx.prewarm, "build", base / "manifest.yaml", "--key", f"{ctx.key()}.key", "--out",
                             base / "bundle", "--serial", ctx.next_serial()], env=clean_environment(), cwd=base)
        elif mode == "verify":
            run = run_fresh([ctx.runtime, "verify", self.bundle, "--trust", f"{ctx.key()}.pub"], env=clean_environment())
        elif mode == "install":
            run = ctx.install(self.bundle, ctx.scratch("cases/pm-install-sample") / "root")
        else:
            run = ctx.exec_under(self.root, ["/bin/true"])
        run.check()
        return {"max_rss_mib": run.max_rss_mib, "seconds": run.seconds}

    def notes(self, ctx):
        return ["build includes its job processes (PoCL compiling in them); exec runs /bin/true, so it is the"
                " runtime's own peak."]
