# SPDX-License-Identifier: Apache-2.0
"""What every case shares: the binaries under test, a scratch directory, a
signing key, and the build -> install steps a bundle goes through."""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from .measure import BenchError, clean_environment, run_fresh


class Context:
    def __init__(self, repo, build, work, quick, runs, budget, log, variant_filter=""):
        self.repo = Path(repo)
        self.build = Path(build).resolve()  # samples run in other directories
        self.work = Path(work)
        self.quick = quick
        self.runs = runs
        self.budget = budget
        self.log = log
        self.variant_filter = variant_filter
        self.prewarm = self.build / "prewarm/cli/prewarm"
        self.runtime = self.build / "runtime/cli/prewarm-runtime"
        self._key = None
        self._bundles = {}
        self._roots = {}
        self._serial = int(time.time())

    # -- what this machine has -------------------------------------------------
    def missing_binaries(self):
        missing = [str(p) for p in (self.prewarm, self.runtime) if not os.access(p, os.X_OK)]
        return f"not built: {', '.join(missing)} (cmake --build {self.build})" if missing else None

    def opencl_platforms(self):
        if not shutil.which("clinfo"):
            return ""
        return subprocess.run(["clinfo", "-l"], capture_output=True, text=True).stdout

    def has_pocl(self):
        return "Portable Computing Language" in self.opencl_platforms()

    def has_nvidia_opencl(self):
        return "NVIDIA" in self.opencl_platforms()

    def has_nvidia_gpu(self):
        return shutil.which("nvidia-smi") is not None and \
            subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0

    # -- scratch ---------------------------------------------------------------
    def scratch(self, name):
        """A new empty directory for one preparation or sample."""
        path = self.work / name
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        return path

    def copy_tree(self, source, name):
        """A private copy of a filled cache or an installed root for one sample:
        no sample sees another's leftovers."""
        dest = self.work / name
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(source, dest, symlinks=True)
        return dest

    # -- bundles ---------------------------------------------------------------
    def key(self):
        if self._key is None:
            keys = self.scratch("keys")
            run_fresh([self.prewarm, "keygen", "--out", keys / "test_only_bench"], env=clean_environment()).check()
            self._key = keys / "test_only_bench"
        return self._key

    def next_serial(self):
        self._serial += 1
        return self._serial

    def build_bundle(self, manifest_text, name, extra_args=(), env=None, cwd=None):
        """`prewarm build` of a manifest into WORK/NAME/bundle; returns (bundle, run, report)."""
        base = self.scratch(name)
        manifest = base / "manifest.yaml"
        manifest.write_text(manifest_text)
        bundle = base / "bundle"
        report = base / "report.json"
        run = run_fresh([self.prewarm, "build", manifest, "--key", f"{self.key()}.key", "--out", bundle,
                         "--serial", self.next_serial(), "--json", report, *extra_args],
                        env=clean_environment(env), cwd=cwd or base).check()
        return bundle, run, json.loads(report.read_text()) if report.exists() else {}

    def bundle_for(self, manifest_text, name, extra_args=()):
        """The same manifest is built once per bench run, whichever case asks."""
        key = (manifest_text, tuple(map(str, extra_args)))
        if key not in self._bundles:
            self._bundles[key] = self.build_bundle(manifest_text, name, extra_args)
        return self._bundles[key]

    def installed_root(self, bundle, name):
        """A pristine root with BUNDLE installed; samples run on copies of it."""
        if str(bundle) not in self._roots:
            root = self.scratch(name) / "root"
            self.install(bundle, root).check()
            self._roots[str(bundle)] = root
        return self._roots[str(bundle)]

    def install(self, bundle, root, env=None, extra_args=()):
        return run_fresh([self.runtime, "install", bundle, "--trust", f"{self.key()}.pub", "--root", root,
                          *extra_args], env=clean_environment(env))

    def exec_under(self, root, argv, env=None):
        return run_fresh([self.runtime, "exec", "--root", root, "--", *argv], env=clean_environment(env))

    def prewarm_json(self, *args):
        run = run_fresh([self.prewarm, *args], env=clean_environment()).check()
        return json.loads(run.stdout)


def require(condition, reason):
    if not condition:
        raise BenchError(reason)
