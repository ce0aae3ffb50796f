# SPDX-License-Identifier: Apache-2.0
# The script that produced results.json (paths as run, under /tmp/cpu-bench).
import json, os, resource, subprocess, sys, time, shutil
RT = "/work/wt-cpu/build/runtime/cli/prewarm-runtime"
APP = ["/tmp/cpu-bench/venv/bin/python", "/work/wt-cpu/bench/cpu_apps/jax_mlp.py"]
env = dict(os.environ, JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES="none", JAX_PLATFORMS="cpu")
def run(argv, extra, tag):
    b = resource.getrusage(resource.RUSAGE_CHILDREN); t = time.perf_counter()
    d = subprocess.run(argv, env={**env, **extra}, stdout=subprocess.PIPE, stderr=open(f"/tmp/cpu-bench/{tag}.err", "w"), text=True)
    w = time.perf_counter() - t; a = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert d.returncode == 0, (tag, d.returncode)
    return {"wall": w, "cpu": a.ru_utime - b.ru_utime + a.ru_stime - b.ru_stime, "answer": d.stdout.splitlines()[0]}
warm = "/tmp/cpu-bench/warm"; shutil.rmtree(warm, ignore_errors=True)
run(APP, {"JAX_COMPILATION_CACHE_DIR": warm}, "fill")
rows = {"cold": [], "warm": [], "bundle": []}; audits = []
for i in range(5):
    c = f"/tmp/cpu-bench/cold-{i}"; shutil.rmtree(c, ignore_errors=True)
    rows["cold"].append(run(APP, {"JAX_COMPILATION_CACHE_DIR": c}, "cold"))
    rows["warm"].append(run(APP, {"JAX_COMPILATION_CACHE_DIR": warm}, "warm"))
    rows["bundle"].append(run([RT, "exec", "--root", "/tmp/cpu-bench/root-elsewhere", "--audit", f"/tmp/cpu-bench/audit-{i}.json", "--"] + APP, {}, "bundle"))
    audits.append(json.load(open(f"/tmp/cpu-bench/audit-{i}.json"))["summary"])
json.dump({"rows": rows, "audits": audits}, open("/tmp/cpu-bench/results.json", "w"), indent=1)
med = lambda xs: sorted(xs)[len(xs)//2]
for k, rs in rows.items():
    print(k, "wall med %.2f min %.2f" % (med([r["wall"] for r in rs]), min(r["wall"] for r in rs)), "cpu med %.2f min %.2f" % (med([r["cpu"] for r in rs]), min(r["cpu"] for r in rs)), "answers", sorted({r["answer"] for r in rs}))
print("audits", audits)
for k in ("warm", "bundle"):
    print(k, "/cold cpu ratio per round", [round(b["cpu"] / a["cpu"], 3) for a, b in zip(rows["cold"], rows[k])])
print("bundle/warm cpu ratio per round", [round(b["cpu"] / a["cpu"], 3) for a, b in zip(rows["warm"], rows["bundle"])])
print("bundle/warm wall ratio per round", [round(b["wall"] / a["wall"], 3) for a, b in zip(rows["warm"], rows["bundle"])])
