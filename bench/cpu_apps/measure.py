#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU applications through `prewarm build`: cold, warm in place, and a bundle installed at another root.

For each application (JAX: bench/cpu_apps/jax_mlp.py, its cache located by
JAX_COMPILATION_CACHE_DIR; PyTensor in C mode: bench/cpu_apps/pytensor_mlp.py,
its cache carried as the flag base_compiledir={dir} inside PYTENSOR_FLAGS;
plain OpenVINO: bench/cpu_apps/openvino_model.py, the core's CACHE_DIR from
OV_CACHE_DIR; onnxruntime's OpenVINO execution provider:
bench/cpu_apps/ort_openvino_model.py, its cache_dir from ORT_OV_CACHE_DIR):

  1. `prewarm build` of a command job on the cpu target (verify: require, or
     what --verify APP=warn says for an application whose cache cannot hit);
  2. `prewarm-runtime install` at another root, and every bundle run, in a
     private mount namespace with a tmpfs over /etc/OpenCL/vendors (no ICD:
     an image without PoCL), so the CPU slice is shown to install and hit
     without PoCL;
  3. ROUNDS interleaved rounds of: cold (an empty cache), warm (the
     application's own cache, filled in place once before), bundle
     (`prewarm-runtime exec --audit` on the installed root).

Wall time is perf_counter around the process; CPU time is the children's
rusage (the whole process tree: unshare, exec, the compiler PyTensor runs).
The install trusts the key alone, or, for an application whose variable is
not a vetted cache location (OpenVINO's two), a trust policy naming it.
Needs root (unshare -m, mount). Writes OUT/results.json (or --results NAME);
prints a summary.

usage: measure.py --prewarm BIN --runtime BIN [--jax-python PY] [--pytensor-python PY]
                  [--openvino-python PY] [--ort-python PY] --out DIR [--rounds 5]
                  [--only APP ...] [--verify APP=warn ...] [--results NAME]
An application runs when its python is given (and, with --only, it is named).
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HIDE_ICDS = "mount -t tmpfs none /etc/OpenCL/vendors && exec \"$@\""


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def timed(argv, env, err_path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(err_path, "w") as err:
        done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{argv[0]} failed ({done.returncode}); see {err_path}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "answer": done.stdout.splitlines()[0]}


def without_icds(argv):
    return ["unshare", "-m", "sh", "-c", HIDE_ICDS, "sh"] + argv


class App:
    def __init__(self, name, python, script, cache_yaml, env, locate):
        self.name, self.python, self.script = name, python, script
        self.cache_yaml, self.env, self.locate = cache_yaml, env, locate
        self.verify = "require"
        # A cache-locating variable outside prewarm-runtime's vetted list
        # (the application's own name): exported only where the image's trust
        # policy names it (install: {environment: [...]}).
        self.policy_environment = []

    def argv(self):
        return [self.python, os.path.join(HERE, self.script)]


def apps(args):
    jax_env = {"JAX_PLATFORMS": "cpu", "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES": "none"}
    listed = [
        App("jax", args.jax_python, "jax_mlp.py", "{name: jax, variable: JAX_COMPILATION_CACHE_DIR}", jax_env,
            lambda d: {"JAX_COMPILATION_CACHE_DIR": d}),
        App("pytensor", args.pytensor_python, "pytensor_mlp.py",
            "{name: pytensor, variable: PYTENSOR_FLAGS, flag: \"base_compiledir={dir}\", separator: \",\"}",
            {"PYTENSOR_FLAGS": "floatX=float64"}, lambda d: {"PYTENSOR_FLAGS": f"floatX=float64,base_compiledir={d}"}),
        App("openvino", args.openvino_python, "openvino_model.py", "{name: openvino, variable: OV_CACHE_DIR}", {},
            lambda d: {"OV_CACHE_DIR": d}),
        App("ort-openvino", args.ort_python, "ort_openvino_model.py",
            "{name: ort-openvino, variable: ORT_OV_CACHE_DIR}", {}, lambda d: {"ORT_OV_CACHE_DIR": d}),
    ]
    for app in listed:
        if app.name in ("openvino", "ort-openvino"):
            app.policy_environment = list(app.locate("").keys())
    return listed


def build_and_install(args, app, work, key):
    env_yaml = ", ".join(f"{k}: \"{v}\"" for k, v in app.env.items())
    manifest = os.path.join(work, "manifest.yaml")
    with open(manifest, "w") as f:
        f.write(f"version: 1\nmodels:\n  - name: {app.name}-cpu\n    command:\n"
                f"      argv: {json.dumps(app.argv())}\n      env: {{{env_yaml}}}\n      kinds: []\n"
                f"      caches: [{app.cache_yaml}]\n      verify: {app.verify}\ntargets: [cpu]\n")
    bundle, root = os.path.join(work, "bundle"), os.path.join(work, "root-elsewhere")
    built = timed([args.prewarm, "build", manifest, "--key", key + ".key", "--out", bundle, "--json",
                   os.path.join(work, "build.json")], dict(os.environ), os.path.join(work, "build.err"))
    proof = json.load(open(os.path.join(work, "build.json")))["jobs"][0]["report"]["hit_proof"]
    trust = key + ".pub"
    if app.policy_environment:
        trust = os.path.join(work, "policy.yaml")
        with open(trust, "w") as f:
            f.write(f"version: 1\nkeys:\n  - file: {key}.pub\n"
                    f"install:\n  environment: [{', '.join(app.policy_environment)}]\n")
    installed = timed(without_icds([args.runtime, "install", bundle, "--trust", trust, "--root", root]),
                      dict(os.environ), os.path.join(work, "install.err"))
    inspect = subprocess.run([args.prewarm, "inspect", bundle, "--json"], stdout=subprocess.PIPE, text=True, check=True)
    requirements = [f"{r['key']} {r['op']} {r['value']}" for r in json.loads(inspect.stdout)["slices"][0]["requirements"]]
    build_log = open(os.path.join(work, "build.err")).read().strip().splitlines()
    return {"verify": app.verify, "policy_environment": app.policy_environment, "build_log": build_log,
            "build": built, "proof": proof, "install_without_icds": installed, "requirements": requirements,
            "install_log": open(os.path.join(work, "install.err")).read().strip().splitlines()}, root


def measure(args, app, root, work):
    base = dict(os.environ, **app.env)
    warm = os.path.join(work, "warm")
    shutil.rmtree(warm, ignore_errors=True)
    timed(app.argv(), dict(base, **app.locate(warm)), os.path.join(work, "fill.err"))
    rows = {"cold": [], "warm": [], "bundle": []}
    audits = []
    for i in range(args.rounds):
        cold = os.path.join(work, f"cold-{i}")
        shutil.rmtree(cold, ignore_errors=True)
        rows["cold"].append(timed(app.argv(), dict(base, **app.locate(cold)), os.path.join(work, "cold.err")))
        rows["warm"].append(timed(app.argv(), dict(base, **app.locate(warm)), os.path.join(work, "warm.err")))
        audit = os.path.join(work, f"audit-{i}.json")
        rows["bundle"].append(timed(without_icds([args.runtime, "exec", "--root", root, "--audit", audit, "--"] +
                                                 app.argv()), base, os.path.join(work, f"bundle-{i}.err")))
        audits.append(json.load(open(audit))["summary"])
    return rows, audits


def summary(name, rows, audits):
    med = statistics.median
    print(f"{name}: variant   wall median (min) s   CPU median (min) s")
    for variant, rs in rows.items():
        walls, cpus = [r["wall_s"] for r in rs], [r["cpu_s"] for r in rs]
        print(f"{name}: {variant:<8} {med(walls):7.2f} ({min(walls):.2f})       {med(cpus):7.2f} ({min(cpus):.2f})")
    print(f"{name}: answers {sorted({r['answer'] for rs in rows.values() for r in rs})}")
    print(f"{name}: bundle/warm CPU per round "
          f"{[round(b['cpu_s'] / w['cpu_s'], 3) for w, b in zip(rows['warm'], rows['bundle'])]}")
    print(f"{name}: audits {sorted(set(audits))}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--prewarm", required=True)
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--jax-python")
    parser.add_argument("--pytensor-python")
    parser.add_argument("--openvino-python")
    parser.add_argument("--ort-python")
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=["jax", "pytensor", "openvino", "ort-openvino"])
    parser.add_argument("--verify", nargs="+", default=[], metavar="APP=warn",
                        help="a job's verify: other than require (an application whose cache cannot hit)")
    parser.add_argument("--results", default="results.json")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    key = os.path.join(args.out, "test_only_bench")
    subprocess.run([args.prewarm, "keygen", "--out", key], check=True, capture_output=True)
    icds = subprocess.run(without_icds(["sh", "-c", "ls -A /etc/OpenCL/vendors | wc -l; clinfo -l 2>&1 | head -3"]),
                          stdout=subprocess.PIPE, text=True, check=True).stdout
    results = {"load_before": load(), "uname": os.uname().release, "cpus": os.cpu_count(),
               "icds_visible_when_hidden": icds.strip().splitlines(), "apps": {}}
    verify = dict(v.split("=", 1) for v in args.verify)
    for app in apps(args):
        if app.python is None or (args.only and app.name not in args.only):
            continue
        app.verify = verify.get(app.name, "require")
        work = os.path.join(args.out, app.name)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        made, root = build_and_install(args, app, work, key)
        rows, audits = measure(args, app, root, work)
        results["apps"][app.name] = dict(made, rows=rows, audits=audits)
        summary(app.name, rows, audits)
    results["load_after"] = load()
    with open(os.path.join(args.out, args.results), "w") as f:
        json.dump(results, f, indent=1)
    print("load before", results["load_before"], "after", results["load_after"])


if __name__ == "__main__":
    main()
