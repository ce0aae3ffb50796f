#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: applications that keep their own kernel cache, through
# prewarm, as a user runs them. JAX (its persistent compilation cache,
# JAX_COMPILATION_CACHE_DIR: bench/command/jax_app.py) and CuPy (its NVRTC
# cubin cache, CUPY_CACHE_DIR: bench/command/cupy_app.py), each a command
# workload with `kinds: [cuda]` and its own cache under `caches:`:
#   1. `prewarm build`: the job line's hit proof per kind;
#   2. `prewarm-runtime install` into a fresh root;
#   3. RUNS rounds, each in fresh processes, interleaved: cold (empty caches),
#      exec (a copy of the installed root, through `prewarm-runtime exec
#      --audit`), warm in place (the cold run's own caches used again);
#   4. per application: medians, exec / warm, the audit lines, and whether
#      every run's results are bit-identical to the cold run's.
# Prepare on the build host:  bench/command/make_gpu_carry.sh BUILD_DIR
# Run from the repository root, carrying .carry/gpu (~3-5 min):
#   OUT=$OUT bench/command/gpu_app_proof.sh
# Env: APPS ("jax cupy"), KINDS (cuda: the built-in kinds beside the own cache),
#      CAPTURE_ROOT (0; 1: build with --capture-root at the root the runs
#      install into, and exec with --paths root: for caches whose keys hold
#      their own path, as JAX's do), RUNS (5), PYTHON (python3),
#      OUT (./out/gpu_app_proof).
set -uo pipefail

APPS=${APPS:-"jax cupy"}
KINDS=${KINDS:-cuda}
CAPTURE_ROOT=${CAPTURE_ROOT:-0}
RUNS=${RUNS:-5}
PYTHON=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
gpu_bench=gpu_app_proof # the shared preamble: OUT, work, samples, note, die, gpu_bench_env
# shellcheck source=bench/command/gpu_carry.sh
source "$repo/bench/command/gpu_carry.sh"
app_versions() {
  for app in $APPS; do
    case $app in
      jax) "$PYTHON" -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())' 2>&1 ;;
      cupy) "$PYTHON" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 ;;
    esac
  done
}
gpu_bench_env app_versions

variable() { case $1 in jax) echo JAX_COMPILATION_CACHE_DIR ;; cupy) echo CUPY_CACHE_DIR ;; esac; }
script() { echo "$repo/bench/command/$1_app.py"; }
cache_env() { # APP DIR
  mkdir -p "$2/app" "$2/cuda"
  echo "$(variable "$1")=$2/app CUDA_CACHE_PATH=$2/cuda CUDA_CACHE_MAXSIZE=4294967296"
}

{
  echo "version: 1"
  echo "models:"
  for app in $APPS; do
    cat <<YAML
  - name: $app-app
    command:
      argv: [$PYTHON, $(script "$app")]
      env: {LD_LIBRARY_PATH: "$ORIG_LD_LIBRARY_PATH"}
      timeout: 10m
      kinds: [$KINDS]
      caches: [{name: $app, variable: $(variable "$app")}]
      verify: warn
YAML
  done
  echo "precisions: [fp32]"
  echo "targets: [$target]"
  echo "bundle: {channel: bench/apps}"
} > "$work/apps.yaml"
cp "$work/apps.yaml" "$OUT/logs/apps.yaml"
root="$work/root"
capture_flags=() paths_flags=()
if [ "$CAPTURE_ROOT" = 1 ]; then capture_flags=(--capture-root "$root"); paths_flags=(--paths root); fi
t=$(now)
if pw build "$work/apps.yaml" "${capture_flags[@]}" --key "$work/test_only_gpu.key" --out "$work/apps.bundle" \
     --json "$OUT/logs/build.json" > "$OUT/logs/build.out" 2> "$OUT/logs/build.err"; then
  note "build ok in $(elapsed "$t") s"
else
  note "build failed: $(tail -5 "$OUT/logs/build.err")"
fi
cat "$OUT/logs/build.out" "$OUT/logs/build.err" | grep -E "ok |FAILED|hit proof|warning" | tee "$OUT/hit_proof_lines.txt" >&2
# A fresh install for each exec run, at the same path (a cache whose keys hold
# its path must find it where the build put it).
fresh_install() {
  rm -rf "$root"
  pwr install "$work/apps.bundle" --trust "$work/test_only_gpu.pub" --root "$root" \
    > "$OUT/logs/install.out" 2> "$OUT/logs/install.err" || { note "install failed: $(tail -3 "$OUT/logs/install.err")"; return 1; }
}

# record APP MODE RUN JSONFILE WALL_S [AUDIT_JSON_FILE]
record() {
  "$PYTHON" - "$@" >> "$samples" <<'PY'
import json, sys
app, mode, run, path, wall = sys.argv[1:6]
row = {"app": app, "mode": mode, "run": int(run), "wall_s": float(wall)}
row.update(json.loads(open(path).read().strip().splitlines()[-1]))
if len(sys.argv) > 6:
    try:
        audit = json.load(open(sys.argv[6]))
        row["audit"] = audit.get("summary")
        row["audit_this_run"] = (audit.get("this_run") or {}).get("summary")
    except Exception as e:
        row["audit"] = f"unreadable: {e}"
print(json.dumps(row))
PY
}

# shellcheck disable=SC2046
for i in $(seq 1 "$RUNS"); do
  for app in $APPS; do
    dir="$work/cold-$app-$i"; log="$OUT/logs/$app-cold-$i"; t=$(now)
    if env $(cache_env "$app" "$dir") "$PYTHON" "$(script "$app")" > "$log.json" 2> "$log.err"; then
      record "$app" cold "$i" "$log.json" "$(elapsed "$t")"
    else note "$app cold $i failed: $(tail -3 "$log.err")"; fi
    if [ -d "$work/apps.bundle" ] && fresh_install; then
      log="$OUT/logs/$app-exec-$i"; t=$(now)
      if pwr exec --root "$root" "${paths_flags[@]}" --audit "$log.audit.json" -- env LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" \
           "$PYTHON" "$(script "$app")" > "$log.json" 2> "$log.err"; then
        record "$app" exec "$i" "$log.json" "$(elapsed "$t")" "$log.audit.json"
      else note "$app exec $i failed: $(tail -3 "$log.err")"; fi
      grep -h "audit" "$log.err" | tail -1 >> "$OUT/audit_lines.txt"
    fi
    log="$OUT/logs/$app-warm-$i"; t=$(now)
    if env $(cache_env "$app" "$dir") "$PYTHON" "$(script "$app")" > "$log.json" 2> "$log.err"; then
      record "$app" warm_in_place "$i" "$log.json" "$(elapsed "$t")"
    else note "$app warm $i failed: $(tail -3 "$log.err")"; fi
    rm -rf "$dir"
  done
done

CAPTURE_ROOT=$CAPTURE_ROOT "$PYTHON" - "$samples" "$OUT/hit_proof_lines.txt" "$OUT/env.txt" > "$OUT/summary.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
import os
print("# Applications with their own kernel cache on the GPU: hit proof, audit, start times\n")
print("capture root:", "yes (build --capture-root, exec --paths root)" if os.environ.get("CAPTURE_ROOT") == "1" else "no", "\n")
print("```\n" + open(sys.argv[3]).read().strip() + "\n```\n")
print("## hit proof lines from `prewarm build`\n```\n" + open(sys.argv[2]).read().strip() + "\n```\n")
print("Results: a compile may pick one of several equally valid variants (XLA's GEMM autotuning), and a cached")
print("executable reproduces the variant of the run that compiled it; so every run's results must be bit-identical")
print("to those of some cold run, and each warm run's to its own cold run's.\n")
print("| app | mode | runs | median wall s | median first result s | distinct results | all among cold runs' |")
print("|---|---|---|---|---|---|---|")
for app in sorted({r["app"] for r in rows}):
    cold = {r["digest"] for r in rows if r["app"] == app and r["mode"] == "cold"}
    med = {}
    for mode in ("cold", "exec", "warm_in_place"):
        sel = [r for r in rows if r["app"] == app and r["mode"] == mode]
        if not sel:
            continue
        med[mode] = statistics.median(r["first_result_s"] for r in sel)
        print(f"| {app} | {mode} | {len(sel)} | {statistics.median(r['wall_s'] for r in sel):.2f} | "
              f"{med[mode]:.2f} | {len({r['digest'] for r in sel})} | "
              f"{'yes' if all(r['digest'] in cold for r in sel) else 'NO'} |")
    pairs = {(r["run"], r["mode"]): r["digest"] for r in rows if r["app"] == app}
    own = [pairs.get((i, "warm_in_place")) == pairs.get((i, "cold")) for i, m in pairs if m == "cold"]
    print(f"| {app} | warm = its own cold | | | | | {sum(own)} of {len(own)} |")
    if "exec" in med and "warm_in_place" in med:
        print(f"| {app} | exec / warm | | | {med['exec'] / med['warm_in_place']:.3f}× | | |")
print("\n## exec --audit (each run)\n")
for r in rows:
    if r["mode"] == "exec":
        print(f"- {r['app']} run {r['run']}: since install {r.get('audit')}; this run {r.get('audit_this_run')}")
print("\n## the applications' own cache counters\n")
for r in rows:
    extra = {k: v for k, v in r.items() if k.startswith(("jax_cache", "cubins"))}
    print(f"- {r['app']} {r['mode']} {r['run']}: {extra}")
PY
cat "$OUT/summary.md" >&2
