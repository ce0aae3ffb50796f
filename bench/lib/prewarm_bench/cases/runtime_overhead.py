# SPDX-License-Identifier: Apache-2.0
"""(c) What prewarm-runtime adds to a container start that already has its
caches: a repeated install (the bundle is already there: verify the
signature, read the marker, write nothing), `env`, and `exec` of a program
that does nothing, against running that program directly."""
from ..case import Case
from ..measure import clean_environment, run_fresh
from .common import default_manifest, startup_goals, synthetic_cache_bundle, tiny_manifest


class RuntimeOverhead(Case):
    name = "runtime_overhead"
    title = "prewarm-runtime: added start-up time (caches already installed)"
    primary = "wall_ms"
    unit = "ms"
    modes = ("direct", "exec", "env", "install_noop")
    rounds_quick = 3
    rounds_full = 21

    def __init__(self):
        self.roots = {}

    def unavailable(self, ctx):
        return None if ctx.has_pocl() or ctx.has_nvidia_opencl() else "no OpenCL device to build a bundle on"

    def variants(self, ctx):
        return ["tiny bundle"] if ctx.quick else ["default bundle", "256 MiB bundle"]

    def prepare(self, ctx, variant):
        if variant == "256 MiB bundle":
            bundle, _ = synthetic_cache_bundle(ctx, 256, "synthetic-256")
        else:
            text = tiny_manifest() if variant == "tiny bundle" else default_manifest(ctx)
            bundle, _, _ = ctx.bundle_for(text, f"cases/ro-{variant.split()[0]}-build")
        self.roots[variant] = (bundle, ctx.installed_root(bundle, f"cases/ro-{variant.split()[0]}-installed"))

    def sample(self, ctx, variant, mode, round_):
        bundle, root = self.roots[variant]
        if mode == "direct":
            run = run_fresh(["/bin/true"], env=clean_environment())
        elif mode == "exec":
            run = ctx.exec_under(root, ["/bin/true"])
        elif mode == "env":
            run = run_fresh([ctx.runtime, "env", "--root", root], env=clean_environment())
        else:
            run = ctx.install(bundle, root)
        run.check()
        return {"wall_ms": run.seconds * 1000, "max_rss_mib": run.max_rss_mib}

    def goals(self, result):
        return startup_goals(result, "install no-op <= 50 ms", 50, 10)

    def notes(self, ctx):
        return ["direct: /bin/true alone; exec: prewarm-runtime exec --root ROOT -- /bin/true; env: prewarm-runtime env;"
                " install_noop: prewarm-runtime install of the bundle already installed (signature verified, the"
                " host fingerprint compared with the marker's: the devices are probed only when it differs;"
                " nothing written)."]
