# SPDX-License-Identifier: Apache-2.0
"""(a) Real applications that keep their own kernel cache, on PoCL: ffmpeg's
OpenCL filters, OpenCV's T-API (its cache under XDG_CACHE_HOME/opencv),
hashcat (XDG_CACHE_HOME/hashcat), clFFT's client (CLFFT_CACHE_PATH),
darktable-cli (XDG_CACHE_HOME/darktable: one symbolic link per program),
and the programs third_party already measures (clpeak, a CLBlast GEMM
client, pyopencl), start to exit in a fresh process, by cache state:

  cold   every cache empty (PoCL's and the application's own)
  exec   `prewarm build` (command workload, kinds [pocl] and the
         application's own cache as a custom cache) -> `prewarm-runtime
         install` into a root at another path -> each sample on a copy of
         that root through `prewarm-runtime exec`
  warm   the caches as one earlier run of the application left them, in
         place (no prewarm)

Preparation also takes the proof: the build's hit-proof line, then
`prewarm-runtime exec --audit` of one run on a fresh copy of the installed
root; the proof's counts must equal the audit's, kind by kind (a difference
is reported as a failed preparation). Every sample's output (a frame hash,
an image's decoded pixels, the cracked hash, the program's own checks with
its timings masked) must equal the first cold sample's. Goal: exec <= 1.05x
warm for every application whose own cache is captured.

Each needs its Debian package (ffmpeg, python3-opencv, hashcat,
clfft-client, darktable, clpeak, libclblast-dev, python3-pyopencl): a
missing one drops the variant. hashcat and darktable compile for minutes per
cold sample on a 2-core PoCL host."""
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh
from ..results import Goal
from .third_party import HASHCAT, hit_proof

PYTHON = "/usr/bin/python3"
DARKTABLE_KERNELS = Path("/usr/share/darktable/kernels")
FFMPEG_FILTERS = "format=yuv420p,hwupload,unsharp_opencl=lx=5:ly=5:la=1.0,avgblur_opencl=sizeX=3,hwdownload,format=yuv420p"
NUMBERS = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")


class App:
    """One application: its command line (writing into OUT), its own caches
    (name, variable, subdir), the environment it needs, and its output."""
    own_cache = True
    cwd = None
    caches = ()
    env = {}

    def available(self, ctx):
        return None

    def prepare(self, ctx, base):
        """Inputs the command reads (made once)."""

    def argv(self, out):
        raise NotImplementedError

    def build_argv(self, out):
        """The warm-up the build runs (and the warm cache is filled with)."""
        return self.argv(out)

    # The application runs what the warm-up ran: the proof predicts its
    # audit. A variant that runs something else only reports both.
    same_as_warmup = True

    def output(self, run, out):
        """What must be identical in every mode."""
        return hashlib.sha256(run.stdout.encode()).hexdigest()

    def fresh_state(self, out):
        """Per-sample state that is not a cache (darktable's configuration)."""


class Ffmpeg(App):
    own_cache = False  # ffmpeg keeps no kernel cache of its own: PoCL's serves

    def available(self, ctx):
        if not shutil.which("ffmpeg"):
            return "ffmpeg not installed (Debian: ffmpeg)"
        filters = subprocess.run(["ffmpeg", "-hide_banner", "-filters"], capture_output=True, text=True).stdout
        return None if "unsharp_opencl" in filters else "this ffmpeg has no OpenCL filters"

    def prepare(self, ctx, base):
        self.input = base / "in.mkv"
        run_fresh(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=10",
                   "-frames:v", "20", "-pix_fmt", "yuv420p", "-y", self.input], env=clean_environment()).check()

    def argv(self, out):
        return ["ffmpeg", "-hide_banner", "-loglevel", "error", "-init_hw_device", "opencl=ocl:0.0", "-filter_hw_device",
                "ocl", "-i", self.input, "-vf", FFMPEG_FILTERS, "-f", "framemd5", "-y", out / "frames.md5"]

    def output(self, run, out):
        return hashlib.sha256((out / "frames.md5").read_bytes()).hexdigest()


class OpenCV(App):
    caches = ({"name": "opencv", "variable": "XDG_CACHE_HOME", "subdir": "opencv"},)
    # OpenCV takes only GPUs unless told; PoCL is a CPU device.
    env = {"OPENCV_OPENCL_DEVICE": ":CPU:"}

    def available(self, ctx):
        probe = subprocess.run([PYTHON, "-c", "import cv2"], capture_output=True)
        return None if probe.returncode == 0 else "python3-opencv not installed"

    def prepare(self, ctx, base):
        self.script = ctx.repo / "bench/apps/opencv_tapi.py"

    def argv(self, out):
        return [PYTHON, self.script, out / "result.txt", "1280x720"]

    def output(self, run, out):
        return (out / "result.txt").read_text().strip()


class OpenCVOtherInput(OpenCV):
    """Warmed up on 1280x720, run on 1920x1080: OpenCV's own cache keys its
    programs by source and options, which the size does not change; PoCL
    generates work-group functions per local size at the first enqueue."""
    same_as_warmup = False

    def argv(self, out):
        return [PYTHON, self.script, out / "result.txt", "1920x1080"]

    def build_argv(self, out):
        return [PYTHON, self.script, out / "result.txt", "1280x720"]


class Hashcat(App):
    caches = ({"name": "hashcat", "variable": "XDG_CACHE_HOME", "subdir": "hashcat"},)

    def available(self, ctx):
        return None if shutil.which("hashcat") else "hashcat not installed"

    def argv(self, out):
        return HASHCAT + ["-D", "1"]

    def output(self, run, out):
        return run.stdout.strip()  # the cracked hash: HASH:abc


class ClFFT(App):
    caches = ({"name": "clfft", "variable": "CLFFT_CACHE_PATH", "subdir": ""},)

    def available(self, ctx):
        return None if shutil.which("clFFT-client") else "clfft-client not installed"

    def argv(self, out):
        return ["clFFT-client", "-c", "-x", "1024", "-y", "64", "-p", "1"]

    def output(self, run, out):
        # The client checks the transform against its CPU reference.
        return "PASS" if "*****PASS*****" in run.stdout else f"no PASS: {run.stdout[-300:]}"


class Darktable(App):
    caches = ({"name": "darktable", "variable": "XDG_CACHE_HOME", "subdir": "darktable"},)
    # PoCL 3.1 reads darktable's -I"<kernel dir>" with its quotes and finds
    # no header; PoCL adds -I. itself, so darktable runs in its kernel
    # directory.
    cwd = DARKTABLE_KERNELS

    def available(self, ctx):
        if not shutil.which("darktable-cli"):
            return "darktable not installed"
        return None if shutil.which("ffmpeg") else "ffmpeg not installed (makes darktable's input, compares its pixels)"

    def prepare(self, ctx, base):
        self.input = base / "in.png"
        run_fresh(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1024x768",
                   "-frames:v", "1", "-y", self.input], env=clean_environment()).check()
        # darktable writes its configuration at the first start and discards
        # a CPU OpenCL device; the template turns that device on.
        probe = base / "probe"
        run_fresh(["darktable-cli", self.input, base / "probe.jpg", "--core", "--configdir", probe, "--cachedir",
                   base / "probe-cache", "--conf", "opencl=TRUE"], env=clean_environment()).check()
        lines = []
        for line in (probe / "darktablerc").read_text().splitlines():
            m = re.match(r"(cldevice_v\d+_[a-z0-9]+)=(.*)$", line)
            if m:
                fields = m.group(2).split()
                if len(fields) > 8:
                    fields[7] = "0"  # the "disabled" field
                    # The first start with a benchmark of 0 benchmarks the
                    # device and writes the figure here: state outside the
                    # caches that makes the first start read 2 more of PoCL's
                    # files than every later one (docs/guide/manifest.md, Proven hits).
                    if float(fields[8]) == 0:
                        fields[8] = "1.000000"
                line = f"{m.group(1)}={' '.join(fields)}"
            elif line.startswith("opencl="):
                line = "opencl=TRUE"
            lines.append(line)
        self.template = base / "darktablerc"
        self.template.write_text("\n".join(lines) + "\n")

    def fresh_state(self, out):
        config = out / "config"
        config.mkdir()
        shutil.copy(self.template, config / "darktablerc")

    def argv(self, out):
        return ["darktable-cli", self.input, out / "out.jpg", "--core", "--configdir", out / "config"]

    def output(self, run, out):
        # Decoded pixels: the JPEG's metadata names the time of export.
        frames = run_fresh(["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", out / "out.jpg", "-f", "framemd5", "-"],
                           env=clean_environment()).check().stdout
        return [line for line in frames.splitlines() if not line.startswith("#")][-1].split(",")[-1].strip()


class Masked(App):
    """A program that checks its own results and prints timings."""
    own_cache = False

    def output(self, run, out):
        return NUMBERS.sub("N", run.stdout.strip())


class Clpeak(Masked):
    def available(self, ctx):
        return None if shutil.which("clpeak") else "clpeak not installed"

    def argv(self, out):
        return ["clpeak", "-p", "0", "-d", "0", "--kernel-latency"]


class ClBlast(Masked):
    def available(self, ctx):
        self.client = ctx.build / "tests/integration/real_programs/clblast_client"
        return None if self.client.exists() else "the CLBlast client is not built (libclblast-dev)"

    def argv(self, out):
        return [self.client, "gemm"]


class PyOpenCL(Masked):
    # pyopencl's own cache off: it keys by source, PoCL's cache serves.
    env = {"PYOPENCL_CTX": "0", "PYOPENCL_NO_CACHE": "1"}

    def available(self, ctx):
        probe = subprocess.run([PYTHON, "-c", "import pyopencl, numpy"], capture_output=True)
        return None if probe.returncode == 0 else "python3-pyopencl not installed"

    def argv(self, out):
        return [PYTHON, self._script, "--precision", "fp32"]

    def prepare(self, ctx, base):
        self._script = ctx.repo / "manifests/examples/pyopencl_warmup.py"


APPS = {"ffmpeg": Ffmpeg(), "opencv": OpenCV(), "opencv-other-input": OpenCVOtherInput(), "hashcat": Hashcat(), "clfft": ClFFT(), "darktable": Darktable(),
        "clpeak": Clpeak(), "clblast": ClBlast(), "pyopencl": PyOpenCL()}
# Minutes per cold sample here: asked for by name only (--variants).
SLOW = ("hashcat", "darktable")


class Apps(Case):
    name = "apps"
    title = "applications with their own kernel caches on PoCL: cold, through exec, warm in place"
    primary = "wall_s"
    modes = ("cold", "exec", "warm")
    ratios = (("exec/warm", "exec", "warm"), ("cold/exec", "cold", "exec"))
    rounds_quick = 1
    rounds_full = 5

    def __init__(self):
        self.prepared = {}
        self._notes = []

    def unavailable(self, ctx):
        return None if ctx.has_pocl() else "no PoCL platform (pocl-opencl-icd)"

    def variants(self, ctx):
        out = []
        for name, app in APPS.items():
            reason = app.available(ctx)
            if reason:
                self._notes.append(f"{name}: not run: {reason}")
                continue
            if name in SLOW and not re.search(ctx.variant_filter or "^$", name):
                continue
            out.append(name)
        return out[:1] if ctx.quick else out

    def manifest(self, name, app, out):
        argv = ", ".join(json.dumps(str(a)) for a in app.build_argv(out))
        env = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in app.env.items()) + "}"
        caches = ""
        if app.caches:
            caches = "      caches:\n" + "".join(
                f"        - name: {c['name']}\n          variable: {c['variable']}\n"
                + (f"          subdir: {c['subdir']}\n" if c["subdir"] else "") for c in app.caches)
        cwd = f"      cwd: {app.cwd}\n" if app.cwd else ""
        return ("version: 1\nmodels:\n"
                f"  - name: {name}\n    command:\n      argv: [{argv}]\n      env: {env}\n{cwd}{caches}"
                "      kinds: [pocl]\n      verify: warn\n      timeout: 60m\n"
                "precisions: [fp32]\ntargets: [cpu]\nbundle:\n  channel: bench\n  expires: 90d\n")

    # -- the cache directories of one sample -----------------------------------
    def _cache_env(self, app, base):
        env = {"POCL_CACHE_DIR": base / "pocl"}
        for c in app.caches:
            env[c["variable"]] = base / c["variable"].lower()
        for d in env.values():
            Path(d).mkdir(parents=True, exist_ok=True)
        return env

    def _run(self, ctx, app, out, env, root=None, audit=None, warmup=False):
        full = {**app.env, **env}
        argv = [str(a) for a in (app.build_argv(out) if warmup else app.argv(out))]
        if root is not None:
            extra = ["--audit", audit] if audit else []
            argv = [ctx.runtime, "exec", "--root", root, *extra, "--", *argv]
        return run_fresh(argv, env=clean_environment(full), cwd=app.cwd)

    def prepare(self, ctx, variant):
        app = APPS[variant]
        base = ctx.scratch(f"cases/apps-{variant}")
        app.prepare(ctx, base)
        # The build's own run writes its outputs here.
        build_out = base / "build-out"
        build_out.mkdir()
        app.fresh_state(build_out)
        bundle, run, report = ctx.build_bundle(self.manifest(variant, app, build_out), f"cases/apps-{variant}-build")
        proof = hit_proof(report)
        root = ctx.installed_root(bundle, f"cases/apps-{variant}-installed")
        # exec --audit of one run on a fresh copy of the root: what the next
        # start of the application does.
        audit_out = ctx.scratch(f"cases/apps-{variant}-audit")
        app.fresh_state(audit_out)
        audit_root = ctx.copy_tree(root, f"cases/apps-{variant}-audit-root")
        audit_run = self._run(ctx, app, audit_out, {}, root=audit_root, audit=audit_out / "audit.json").check()
        audit_line = next((line.split("audit: ", 1)[1] for line in audit_run.stderr.splitlines()
                           if "prewarm-runtime: audit: " in line), "none")
        audit = json.loads((audit_out / "audit.json").read_text())
        # The warm cache: one cold run of the application, in place.
        fill = ctx.scratch(f"cases/apps-{variant}-fill")
        fill_out = fill / "out"
        fill_out.mkdir()
        app.fresh_state(fill_out)
        fill_run = self._run(ctx, app, fill_out, self._cache_env(app, fill), warmup=True).check()
        if app.same_as_warmup:
            expected = app.output(fill_run, fill_out)
        else:  # the expected output is a cold run's of what the application runs
            cold = ctx.scratch(f"cases/apps-{variant}-cold")
            (cold / "out").mkdir()
            app.fresh_state(cold / "out")
            expected = app.output(self._run(ctx, app, cold / "out", self._cache_env(app, cold)).check(), cold / "out")
        same_audit = app.output(audit_run, audit_out) == expected
        self.prepared[variant] = {"root": root, "fill": fill, "expected": expected}
        mismatch = proof_audit_mismatch(report, audit)
        self._notes.append(f"{variant}: proof: {proof or 'none'}; exec --audit on a fresh install: {audit_line}; "
                           f"proof = audit: {'yes' if not mismatch else ('NO: ' if app.same_as_warmup else 'no, by design (the application ran another input than the warm-up): ') + mismatch}; "
                           f"output under exec --audit {'identical' if same_audit else 'DIFFERENT'}")
        if mismatch and app.same_as_warmup:
            raise BenchError(f"the hit proof's counts differ from exec --audit's: {mismatch}")
        if not same_audit:
            raise BenchError("the output under exec --audit differs from the output of a cold run")

    def sample(self, ctx, variant, mode, round_):
        p, app = self.prepared[variant], APPS[variant]
        base = ctx.scratch(f"cases/apps-{variant}-sample")
        out = base / "out"
        out.mkdir()
        app.fresh_state(out)
        if mode == "cold":
            run = self._run(ctx, app, out, self._cache_env(app, base))
        elif mode == "warm":
            warm = ctx.copy_tree(p["fill"], f"cases/apps-{variant}-sample/warm")
            run = self._run(ctx, app, out, self._cache_env(app, warm))
        else:
            root = ctx.copy_tree(p["root"], f"cases/apps-{variant}-sample/root")
            run = self._run(ctx, app, out, {}, root=root)
        run.check()
        got = app.output(run, out)
        if got != p["expected"]:
            raise BenchError(f"{mode}: output differs from the cold run's: {str(got)[:200]} vs {str(p['expected'])[:200]}")
        return {"wall_s": run.seconds, "max_rss_mib": run.max_rss_mib, "output_identical": 1}

    def goals(self, result):
        own = [v for v in result.variants() if APPS[v].own_cache]
        values = [{"variant": v, "value": round(result.ratio(v, "exec", "warm"), 3)} for v in own
                  if result.ratio(v, "exec", "warm") is not None]
        met = all(x["value"] <= 1.05 for x in values) if values else None
        return [Goal("through exec <= 1.05x warm in place (applications whose own cache is captured)", self.name,
                     "exec/warm <= 1.05", values, met,
                     "" if met else "see the notes: each variant's proof and audit lines")]

    def notes(self, ctx):
        self._notes[:0] = ["wall_s: the application's process from start to exit (exec: prewarm-runtime exec and"
                           " the application); output_identical: 1 when the sample's output equals the cold run's"
                           " (a differing output fails the sample)."]
        return self._notes


def proof_audit_mismatch(report, audit):
    """'' when every kind's reused and new counts of the build's hit proof
    equal those of exec --audit's run on a fresh install; else what differs."""
    proof_kinds = {}
    for job in (report or {}).get("jobs", []):
        for k in ((job.get("report") or {}).get("hit_proof") or {}).get("kinds", []):
            proof_kinds[k["kind"]] = (k.get("reused_files"), k.get("new_files"))
    run = audit.get("this_run") or audit
    audit_kinds = {k["kind"]: (k.get("reused_files"), k.get("new_files")) for k in run.get("kinds", [])
                   if k.get("kind") != "programs"}
    if not proof_kinds:
        return "the build has no hit proof"
    diffs = []
    for kind in sorted(set(proof_kinds) | set(audit_kinds)):
        a, b = proof_kinds.get(kind), audit_kinds.get(kind)
        if a != b:
            diffs.append(f"{kind}: proof {fmt_counts(a)}, audit {fmt_counts(b)}")
    return "; ".join(diffs)


def fmt_counts(counts):
    return "absent" if counts is None else f"{counts[0]} reused, {counts[1]} new"
