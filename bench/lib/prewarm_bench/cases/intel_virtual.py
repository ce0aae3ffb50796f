# SPDX-License-Identifier: Apache-2.0
"""The virtual Intel device (prewarm/virtual_device): the time `prewarm build`
takes to make an absent Intel target's slices through the real Intel driver
of the Intel root posing as it (./setup.sh intel-root; no Intel GPU), against
running the warm-up once, and the size of what it makes.

Built-in model: warmup = `prewarm run` once on this host's OpenCL device
(PoCL, cold cache: the warm-up a user would run); slice = `prewarm build` for
the target: its AOT job (ocloc compile + validate) and its NEO slice (every
program built through NEO on the virtual device, then the hit proof).
dpctl (SYCL, ./setup.sh intel-sycl): warmup = the warm-up script once on the
virtual device (cold NEO and SYCL caches); slice = `prewarm build` of the same
command (the run with its deadline, the hit proof, packing)."""
import json
import os

from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh
from .common import builtin_manifest, ratio_goal

ROOT = os.environ.get("PREWARM_INTEL_ROOT", "/var/cache/prewarm/intel-sid")
VENV = f"{ROOT}/opt/prewarm-sycl"
VIRTUAL_B580 = {"NEOReadDebugKeys": "1", "SetCommandStreamReceiver": "5", "UseAubStream": "0",
                "HardwareInfoOverride": "1x5x4", "UseBindlessMode": "0", "ProductFamilyOverride": "bmg",
                "ForceDeviceId": "E20B", "UR_LOADER_USE_LEVEL_ZERO_V2": "0",
                "ZE_ENABLE_ALT_DRIVERS": f"{ROOT}/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1"}


def command_manifest(python, script, target):
    return (f"version: 1\nmodels:\n  - name: dpctl\n    command:\n      argv: [{python}, {script}]\n"
            f"      timeout: 2m\n      kinds: [neo, sycl]\nprecisions: [fp32]\ntargets: [{target}]\n"
            "bundle:\n  channel: bench\n  expires: 90d\n")


class IntelVirtual(Case):
    name = "intel_virtual"
    title = "an absent Intel target's NEO (and SYCL) slice on the virtual device vs the warm-up once"
    primary = "seconds"
    modes = ("warmup", "slice")
    ratios = (("slice/warmup", "slice", "warmup"),)
    rounds_quick = 1
    rounds_full = 3

    def tool(self, ctx):
        return ctx.build / "prewarm/virtual_device/prewarm-cl-replay"

    def unavailable(self, ctx):
        if not os.path.exists(f"{ROOT}/.complete"):
            return f"no Intel root at {ROOT} (./setup.sh intel-root)"
        if not os.access(self.tool(ctx), os.X_OK):
            return f"not built: {self.tool(ctx)}"
        return None if ctx.has_pocl() else "the built-in warm-up needs the PoCL device"

    def variants(self, ctx):
        if ctx.quick:
            return ["gptq-linear fp32 arc-b580"]
        out = ["qwen2.5-0.5b fp32 arc-b580", "qwen2.5-0.5b fp32 mtl-u-igpu"]
        if os.path.exists(f"{VENV}/.complete"):
            out.append("dpctl SYCL arc-b580")
        return out

    def env(self, ctx, extra=None):
        return clean_environment({"PREWARM_INTEL_ROOT": ROOT, "PREWARM_CL_REPLAY": self.tool(ctx), **(extra or {})})

    def sample(self, ctx, variant, mode, round_):
        base = ctx.scratch(f"cases/iv-{variant.replace(' ', '-')}-{mode}-{round_}")
        words = variant.split()
        target = words[-1]
        warmup = ctx.repo / "tests/integration/intel_virtual/sycl_warmup.py"
        if mode == "warmup" and words[0] == "dpctl":
            (base / "vendors").mkdir()
            (base / "vendors/neo.icd").write_text(f"{ROOT}/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so\n")
            for d in ("neo", "sycl"):
                (base / d).mkdir()
            loader = [f"{ROOT}/lib64/ld-linux-x86-64.so.2", "--library-path",
                      f"{ROOT}/usr/lib/x86_64-linux-gnu:{ROOT}/lib/x86_64-linux-gnu"]
            run = run_fresh([*loader, f"{VENV}/bin/python", warmup],
                            env=clean_environment({**VIRTUAL_B580, "OCL_ICD_VENDORS": base / "vendors",
                                                   "NEO_CACHE_DIR": base / "neo", "SYCL_CACHE_PERSISTENT": "1",
                                                   "SYCL_CACHE_DIR": base / "sycl"}), cwd=base, timeout=300).check()
            return {"seconds": run.seconds, "max_rss_mib": run.max_rss_mib}
        if mode == "warmup":
            (base / "pocl").mkdir()
            run = run_fresh([ctx.prewarm, "run", words[0], "--precision", words[1]],
                            env=clean_environment({"POCL_CACHE_DIR": base / "pocl"}), cwd=base).check()
            return {"seconds": run.seconds, "max_rss_mib": run.max_rss_mib}
        manifest = (command_manifest(f"{VENV}/bin/python", warmup, target) if words[0] == "dpctl"
                    else builtin_manifest(words[0], words[1], [target]))
        (base / "manifest.yaml").write_text(manifest)
        run = run_fresh([ctx.prewarm, "build", base / "manifest.yaml", "--key", f"{ctx.key()}.key", "--out",
                         base / "bundle", "--serial", ctx.next_serial(), "--json", base / "report.json"],
                        env=self.env(ctx), cwd=base).check()
        job = json.loads((base / "report.json").read_text())["jobs"][0]
        report = job.get("report", {})
        neo = report.get("neo", report)  # built-in: the NEO part; command: the whole report
        slices = {}
        for line in (base / "bundle/manifest").read_text().splitlines():
            if line.startswith("slice "):
                current = line.split()[1]
            elif line.startswith("payload "):
                slices[current] = int(line.split()[2])  # compressed bytes
        if not slices:
            raise BenchError(f"{variant}: no slice built")
        out = {"seconds": run.seconds, "max_rss_mib": run.max_rss_mib, "slice_bytes": sum(slices.values())}
        if "entry_bytes" in neo:
            out.update(neo_seconds=neo["seconds"], neo_fill_seconds=neo["fill_seconds"],
                       neo_entry_bytes=neo["entry_bytes"], neo_entries=neo["entries"])
        else:
            out.update(neo_seconds=report["seconds"], neo_fill_seconds=report["fill_seconds"],
                       neo_entry_bytes=report["neo_bytes"] + report["sycl_bytes"],
                       neo_entries=report["neo_entries"] + report["sycl_items"])
        return out

    def goals(self, result):
        return [ratio_goal(result, "a target's virtual-device slice <= 2x the warm-up once", "<= 2", "slice",
                           "warmup", lambda r: r <= 2.0,
                           why="slice includes the AOT compile + validate (built-in) and the hit proof")]

    def notes(self, ctx):
        return ["slice: `prewarm build` wall time for one absent Intel target (built-in: AOT compile + ocloc"
                " validate + the NEO slice: fill and hit proof on the virtual device; dpctl: the command on the"
                " virtual device, its hit proof, packing). neo_seconds: the NEO (and SYCL) part alone;"
                " neo_entry_bytes: the cache entries; slice_bytes: the bundle's compressed slices (AOT included)."
                " warmup: built-in = `prewarm run` once on PoCL with a cold cache; dpctl = the warm-up script once"
                " on the virtual B580 with cold caches.",
                "No Intel GPU: the virtual device is NEO 26.27 of the Intel root with its no-hardware debug keys;"
                " kernels do not execute there, so the times are build times only."]
