# SPDX-License-Identifier: Apache-2.0
"""(b) Verify + install of a large bundle against what an installer without
checks would do with the same payload: `sha256sum` + `tar --zstd -xf`, and
the same followed by `sync -f`. Also what a slice that does not match the
host costs (the signature and manifest are checked; nothing is decompressed)."""
import json
import shutil

from ..case import Case
from ..measure import clean_environment, run_fresh
from .common import ratio_goal, synthetic_cache_bundle


class InstallThroughput(Case):
    name = "install_throughput"
    title = "verify + install vs sha256sum + tar --zstd -xf"
    primary = "seconds"
    modes = ("prewarm", "tar", "tar_sync", "nonmatching")
    ratios = (("prewarm/tar", "prewarm", "tar"), ("prewarm/tar_sync", "prewarm", "tar_sync"))
    rounds_quick = 1
    rounds_full = 5

    def __init__(self):
        self.bundles = {}

    def unavailable(self, ctx):
        if not shutil.which("tar") or not shutil.which("zstd"):
            return "tar and zstd are needed for the comparison"
        return None if ctx.has_pocl() else "the synthetic bundle is built with a PoCL command workload"

    def variants(self, ctx):
        return ["32 MiB"] if ctx.quick else ["1 GiB"]

    def prepare(self, ctx, variant):
        mib = 32 if variant == "32 MiB" else 1024
        bundle, total = synthetic_cache_bundle(ctx, mib, f"synthetic-{mib}")
        other = ctx.scratch(f"cases/it-{mib}-otherhost") / "host.json"
        other.write_text(json.dumps([{"description": "bench: a host without this slice's device",
                                      "vendor": "intel", "pci-id": "0x56a0"}]))
        self.bundles[variant] = (bundle, other, total)

    def sample(self, ctx, variant, mode, round_):
        bundle, other, total = self.bundles[variant]
        dest = ctx.scratch(f"cases/it-samples/{variant.replace(' ', '')}-{mode}-{round_}")
        payloads = sorted((bundle / "slices").glob("*.tar.zst"))
        if mode == "prewarm":
            run = ctx.install(bundle, dest / "root").check()
        elif mode == "nonmatching":
            run = ctx.install(bundle, dest / "root", env={"PREWARM_HOST_DEVICES": other})
            if run.returncode != 4:
                run.check()
        else:
            script = "sha256sum \"$@\" > /dev/null && for p; do tar --zstd -xf \"$p\" -C \"$DEST\"; done"
            if mode == "tar_sync":
                script += " && sync -f \"$DEST\""
            run = run_fresh(["sh", "-c", script, "sh", *payloads], env=clean_environment({"DEST": dest})).check()
        return {"seconds": run.seconds, "max_rss_mib": run.max_rss_mib, "mib_per_s": total / (1 << 20) / run.seconds}

    def goals(self, result):
        return [ratio_goal(result, "install <= 1.15x tar", "<= 1.15", "prewarm", "tar", lambda r: r <= 1.15)]

    def notes(self, ctx):
        return ["prewarm: prewarm-runtime install (signature, payload digest before any parsing, audited extraction,"
                " syncfs, atomic swap) into a fresh root; tar: sha256sum of the payload + tar --zstd -xf;"
                " tar_sync: the same + sync -f; nonmatching: install on a host description that matches no slice"
                " (exit 4). Every sample writes into a fresh directory."]
