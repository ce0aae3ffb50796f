# SPDX-License-Identifier: Apache-2.0
"""Install a 3-target bundle on a host that matches one target: from a local
bundle directory, from an OCI registry on 127.0.0.1 (Debian's docker-registry
with TLS and basic auth, as the integration test runs it:
tests/integration/registry), and from the registry again into a root that
already holds the bundle (a persistent root at the next container start).
Bytes: for the registry, what its access log says it sent (every GET:
manifests and blobs); for the directory, the files the installer reads."""
import atexit
import base64
import json
import os
import random
import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request

from ..case import Case
from ..measure import BenchError, clean_environment, run_fresh

TARGETS = (("cpu", "cpu"), ("nv", "nvidia"), ("amd", "amd"))
GET_LINE = re.compile(r'"GET [^"]*" (\d{3}) (\d+)')


class Registry:
    """A docker-registry on a free 127.0.0.1 port: self-signed TLS, bcrypt
    basic auth, a Docker config holding its credentials. Killed at exit."""

    def __init__(self, base):
        self.base = base
        self.log = base / "registry.log"
        self.process = None

    def start(self):
        """None, or why the registry cannot run here."""
        for tool in ("docker-registry", "htpasswd", "openssl"):
            if not shutil.which(tool):
                return f"{tool} is not installed (setup.sh installs docker-registry, apache2-utils, openssl)"
        b = self.base
        made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                               "-nodes", "-days", "2", "-keyout", b / "key.pem", "-out", b / "cert.pem",
                               "-subj", "/CN=prewarm-bench-registry", "-addext", "subjectAltName=IP:127.0.0.1"],
                              capture_output=True, text=True, timeout=60)
        if made.returncode != 0:
            return f"openssl could not make the test certificate: {made.stderr.strip()[-200:]}"
        htpasswd = subprocess.run(["htpasswd", "-Bbn", "bench", "bench_secret"], capture_output=True, text=True,
                                  timeout=60)
        (b / "htpasswd").write_text(htpasswd.stdout)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.address = f"127.0.0.1:{s.getsockname()[1]}"
        (b / "registry.yml").write_text(
            "version: 0.1\nlog: {level: warn, accesslog: {disabled: false}}\n"
            f"storage: {{filesystem: {{rootdirectory: {b}/storage}}}}\n"
            f"http: {{addr: {self.address}, tls: {{certificate: {b}/cert.pem, key: {b}/key.pem}}}}\n"
            f"auth: {{htpasswd: {{realm: prewarm-bench, path: {b}/htpasswd}}}}\n")
        auth = base64.b64encode(b"bench:bench_secret").decode()
        (b / "docker").mkdir(exist_ok=True)
        (b / "docker/config.json").write_text(json.dumps({"auths": {self.address: {"auth": auth}}}))
        with open(self.log, "ab") as log:  # the access log goes to stdout, errors to stderr
            self.process = subprocess.Popen(["docker-registry", "serve", b / "registry.yml"], stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        atexit.register(self.stop)
        tls = ssl.create_default_context(cafile=str(b / "cert.pem"))
        for _ in range(100):
            if self.process.poll() is not None:
                return f"docker-registry exited {self.process.returncode}: {self.log.read_text()[-300:]}"
            try:
                urllib.request.urlopen(f"https://{self.address}/v2/", context=tls, timeout=2)
                return None
            except urllib.error.HTTPError:
                return None  # 401: up, and asking for credentials
            except OSError:
                time.sleep(0.1)
        self.stop()
        return f"docker-registry did not answer on {self.address} within 10 s"

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def env(self, host):
        return {"DOCKER_CONFIG": self.base / "docker", "PREWARM_HOST_DEVICES": host}

    def log_lines(self):
        return len(self.log.read_bytes().splitlines())

    def bytes_sent_since(self, line):
        """Body bytes of successful GETs in the access log after LINE."""
        lines = self.log.read_text(errors="replace").splitlines()[line:]
        return sum(int(m.group(2)) for m in map(GET_LINE.search, lines) if m and m.group(1).startswith("2"))


class RegistryInstall(Case):
    name = "registry"
    title = "install from an OCI registry (127.0.0.1, TLS + basic auth) vs from a local directory"
    primary = "seconds"
    modes = ("directory", "registry", "registry_installed")
    ratios = (("registry/directory", "registry", "directory"),)
    rounds_quick = 1
    rounds_full = 7

    def __init__(self):
        self.registry = None
        self.prepared = {}

    def maker(self, ctx):
        return ctx.build / "tests/integration/registry/make_test_bundle"

    def unavailable(self, ctx):
        if not os.access(self.maker(ctx), os.X_OK):
            return f"not built: {self.maker(ctx)} (configure with -DPREWARM_BUILD_TESTS=ON)"
        self.registry = Registry(ctx.scratch("cases/registry-server"))
        reason = self.registry.start()
        return f"the test registry cannot start: {reason}" if reason else None

    def variants(self, ctx):
        return ["4 MiB per target"] if ctx.quick else ["64 MiB per target"]

    def prepare(self, ctx, variant):
        mib = int(variant.split()[0])
        base = ctx.scratch(f"cases/registry-{mib}")
        rng = random.Random(7)
        specs = []
        for slice_id, vendor in TARGETS:
            tree = base / f"tree-{vendor}/pocl"
            tree.mkdir(parents=True)
            total, i = 0, 0
            while total < mib << 20:  # cache-like files: half random, half repeated
                n = rng.randint(64 << 10, 1 << 20)
                head = rng.randbytes(n // 2)
                (tree / f"k{i}.bin").write_bytes(head + head[: n - len(head)])
                total, i = total + n, i + 1
            specs.append(f"{slice_id}:{vendor}:{tree.parent}")
        bundle = base / "bundle"
        run_fresh([self.maker(ctx), f"{ctx.key()}.key", bundle, ctx.next_serial(), *specs],
                  env=clean_environment()).check()
        host = base / "host.json"
        host.write_text(json.dumps([{"description": "bench: a cpu host (test double)", "vendor": "cpu"}]))
        env = self.registry.env(host)
        push = run_fresh([ctx.prewarm, "push", bundle, f"{self.registry.address}/bench/bundle:{mib}",
                          "--ca-file", self.registry.base / "cert.pem"], env=clean_environment(env)).check()
        ref = push.stdout.strip()
        installed = base / "installed"
        self.install_from_registry(ctx, ref, installed, env).check()
        ctx.install(bundle, base / "check-dir", env={"PREWARM_HOST_DEVICES": host}).check()
        if tree_digest(installed / "pocl") != tree_digest(base / "check-dir/pocl"):
            raise BenchError("the registry install and the directory install differ")
        read = sum((bundle / f).stat().st_size for f in ("manifest", "manifest.sig", "slices/cpu.tar.zst"))
        whole = read + sum(p.stat().st_size for p in (bundle / "slices").glob("*") if p.name != "cpu.tar.zst")
        self.prepared[variant] = (bundle, ref, host, env, installed, read, whole)

    def install_from_registry(self, ctx, ref, root, env):
        return ctx.install(ref, root, env=env, extra_args=["--ca-file", self.registry.base / "cert.pem"])

    def sample(self, ctx, variant, mode, round_):
        bundle, ref, host, env, installed, read, whole = self.prepared[variant]
        root = ctx.scratch(f"cases/registry-samples/{mode}-{round_}") / "root"
        if mode == "directory":
            run = ctx.install(bundle, root, env={"PREWARM_HOST_DEVICES": host}).check()
            return {"seconds": run.seconds, "bytes": read, "bundle_bytes": whole, "max_rss_mib": run.max_rss_mib}
        if mode == "registry_installed":
            root = installed  # already installed: nothing is written, the same root serves every round
        line = self.registry.log_lines()
        run = self.install_from_registry(ctx, ref, root, env).check()
        if mode == "registry_installed" and "already installed" not in run.stdout:
            raise BenchError(f"expected 'already installed', got: {run.stdout.strip()[:200]}")
        return {"seconds": run.seconds, "bytes": self.registry.bytes_sent_since(line), "max_rss_mib": run.max_rss_mib}

    def notes(self, ctx):
        return ["A 3-target bundle (synthetic cache files, half random) installed on a host described by"
                " PREWARM_HOST_DEVICES as one cpu device (the host probe is left out: it costs the same in every"
                " mode), into a fresh root per sample. directory: prewarm-runtime install DIR; registry: install"
                " REGISTRY/REPO@sha256:... (OCI manifest, signed manifest and signature, then this host's slice"
                " only); registry_installed: the same into a root that already holds the bundle (no slice fetched)."
                " bytes: the registry's access log (every successful GET) or the files a directory install reads.",
                "Registry: Debian's docker-registry on 127.0.0.1 (TLS, bcrypt basic auth): loopback, so the time is"
                " the protocol's and TLS's, not a network's."]


def tree_digest(root):
    import hashlib
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()
