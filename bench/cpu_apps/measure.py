#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU applications through `prewarm build`: cold, warm in place, and a bundle installed at another root.

For each application (JAX: bench/cpu_apps/jax_mlp.py, its cache located by
JAX_COMPILATION_CACHE_DIR; PyTensor in C mode: bench/cpu_apps/pytensor_mlp.py,
its cache carried as the flag base_compiledir={dir} inside PYTENSOR_FLAGS):

  1. `prewarm build` of a command job on the cpu target (verify: require);
  2. `prewarm-runtime install` at another root, and every bundle run, in a
     private mount namespace with a tmpfs over /etc/OpenCL/vendors (no ICD:
     an image without PoCL), so the CPU slice is shown to install and hit
     without PoCL;
  3. ROUNDS interleaved rounds of: cold (an empty cache), warm (the
     application's own cache, filled in place once before), bundle
     (`prewarm-runtime exec --audit` on the installed root).

Wall time is perf_counter around the process; CPU time is the children's
rusage (the whole process tree: unshare, exec, the compiler PyTensor runs).
Needs root (unshare -m, mount). Writes OUT/results.json; prints a summary.

usage: measure.py --prewarm BIN --runtime BIN --jax-python PY --pytensor-python PY --out DIR [--rounds 5]
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

    def argv(self):
        return [self.python, os.path.join(HERE, self.script)]


def apps(args):
    jax_env = {"JAX_PLATFORMS": "cpu", "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES": "none"}
    return [
        App("jax", args.jax_python, "jax_mlp.py", "{name: jax, variable: JAX_COMPILATION_CACHE_DIR}", jax_env,
            lambda d: {"JAX_COMPILATION_CACHE_DIR": d}),
        App("pytensor", args.pytensor_python, "pytensor_mlp.py",
            "{name: pytensor, variable: PYTENSOR_FLAGS, flag: \"base_compiledir={dir}\", separator: \",\"}",
            {"PYTENSOR_FLAGS": "floatX=float64"}, lambda d: {"PYTENSOR_FLAGS": f"floatX=float64,base_compiledir={d}"}),
    ]


def build_and_install(args, app, work, key):
    env_yaml = ", ".join(f"{k}: \"{v}\"" for k, v in app.env.items())
    manifest = os.path.join(work, "manifest.yaml")
    with open(manifest, "w") as f:
        f.write(f"version: 1\nmodels:\n  - name: {app.name}-cpu\n    command:\n"
                f"      argv: {json.dumps(app.argv())}\n      env: {{{env_yaml}}}\n      kinds: []\n"
                f"      caches: [{app.cache_yaml}]\n      verify: require\ntargets: [cpu]\n")
    bundle, root = os.path.join(work, "bundle"), os.path.join(work, "root-elsewhere")
    built = timed([args.prewarm, "build", manifest, "--key", key + ".key", "--out", bundle, "--json",
                   os.path.join(work, "build.json")], dict(os.environ), os.path.join(work, "build.err"))
    proof = json.load(open(os.path.join(work, "build.json")))["jobs"][0]["report"]["hit_proof"]
    installed = timed(without_icds([args.runtime, "install", bundle, "--trust", key + ".pub", "--root", root]),
                      dict(os.environ), os.path.join(work, "install.err"))
    inspect = subprocess.run([args.prewarm, "inspect", bundle, "--json"], stdout=subprocess.PIPE, text=True, check=True)
    requirements = [f"{r['key']} {r['op']} {r['value']}" for r in json.loads(inspect.stdout)["slices"][0]["requirements"]]
    return {"build": built, "proof": proof, "install_without_icds": installed, "requirements": requirements,
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
    parser.add_argument("--jax-python", required=True)
    parser.add_argument("--pytensor-python", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=["jax", "pytensor"])
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    key = os.path.join(args.out, "test_only_bench")
    subprocess.run([args.prewarm, "keygen", "--out", key], check=True, capture_output=True)
    icds = subprocess.run(without_icds(["sh", "-c", "ls -A /etc/OpenCL/vendors | wc -l; clinfo -l 2>&1 | head -3"]),
                          stdout=subprocess.PIPE, text=True, check=True).stdout
    results = {"load_before": load(), "uname": os.uname().release, "cpus": os.cpu_count(),
               "icds_visible_when_hidden": icds.strip().splitlines(), "apps": {}}
    for app in apps(args):
        if args.only and app.name != args.only:
            continue
        work = os.path.join(args.out, app.name)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        made, root = build_and_install(args, app, work, key)
        rows, audits = measure(args, app, root, work)
        results["apps"][app.name] = dict(made, rows=rows, audits=audits)
        summary(app.name, rows, audits)
    results["load_after"] = load()
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("load before", results["load_before"], "after", results["load_after"])


if __name__ == "__main__":
    main()
