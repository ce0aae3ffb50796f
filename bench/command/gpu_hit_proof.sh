#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: the hit proof for a torch.compile warm-up of a real
# transformers model (Qwen2ForCausalLM, random weights, 2 layers, hidden 256:
# bench/command/qwen2_compile_warmup.py), per precision:
#   1. `prewarm build` (command workload, kinds inductor, triton, cuda,
#      verify: warn): the job line's hit proof per kind ("triton: N reused,
#      0 new") and the --json report's hit_proof (misses with names);
#   2. `prewarm-runtime install` into a fresh root;
#   3. timings, RUNS fresh processes each: cold (empty caches), exec (each
#      run on its own copy of the installed root through `prewarm-runtime
#      exec --audit`: what it reused and compiled anew, per kind, with Triton
#      kernel names and Inductor graph keys), warm in place (the caches the
#      cold run filled, used again directly).
# Prepare on the build host:  bench/command/make_gpu_carry.sh BUILD_DIR
# Run from the repository root, carrying .carry/gpu, in one call (~5-8 min):
#   OUT=$OUT bench/command/gpu_hit_proof.sh
# Env: PRECISIONS ("fp16 bf16"; bf16 needs a prewarm whose manifests accept
#      it: the script falls back to fp16 only and says so), RUNS (3),
#      LAYERS (2), HIDDEN (256), PYTHON (python3), OUT (./out/gpu_hit_proof).
# Writes OUT/samples.jsonl, OUT/summary.md, OUT/env.txt, OUT/logs/.
set -uo pipefail

PRECISIONS=${PRECISIONS:-"fp16 bf16"}
RUNS=${RUNS:-3}
LAYERS=${LAYERS:-2}
HIDDEN=${HIDDEN:-256}
PYTHON=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
SCRIPT="$repo/bench/command/qwen2_compile_warmup.py"
gpu_bench=gpu_hit_proof # the shared preamble: OUT, work, samples, note, die, gpu_bench_env
# shellcheck source=bench/command/gpu_carry.sh
source "$repo/bench/command/gpu_carry.sh"
model_versions() {
  "$PYTHON" -c 'import torch, triton, transformers, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "transformers", transformers.__version__)' 2>&1
  echo "model: Qwen2ForCausalLM random weights, layers $LAYERS, hidden $HIDDEN"
}
gpu_bench_env model_versions

# record PRECISION MODE RUN JSONFILE WALL_S [EXTRA_JSON]
record() {
  "$PYTHON" - "$@" >> "$samples" <<'PY'
import json, sys
precision, mode, run, path, wall = sys.argv[1:6]
extra = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
row = {"precision": precision, "mode": mode, "run": int(run), "wall_s": float(wall)}
row.update(json.loads(open(path).read().strip().splitlines()[-1]))
row.update(extra)
print(json.dumps(row))
PY
}
cache_env() {
  mkdir -p "$1/inductor" "$1/triton" "$1/cuda"
  echo "TORCHINDUCTOR_CACHE_DIR=$1/inductor TRITON_CACHE_DIR=$1/triton CUDA_CACHE_PATH=$1/cuda" \
       "CUDA_CACHE_MAXSIZE=4294967296 TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1"
}
model_args=(--layers "$LAYERS" --hidden "$HIDDEN")

# --- build with the hit proof ------------------------------------------------
write_manifest() { # PRECISION-LIST
  cat > "$work/qwen2.yaml" <<YAML
version: 1
models:
  - name: qwen2-random
    command:
      argv: [$PYTHON, $SCRIPT, --layers, "$LAYERS", --hidden, "$HIDDEN", --precision, "{precision}"]
      env: {LD_LIBRARY_PATH: "$ORIG_LD_LIBRARY_PATH"}
      timeout: 20m
      kinds: [inductor, triton, cuda]
      verify: warn
precisions: [$1]
targets: [$target]
bundle:
  channel: bench/qwen2
YAML
}
write_manifest "$(echo $PRECISIONS | sed 's/ /, /g')"
if ! pw plan "$work/qwen2.yaml" > "$OUT/logs/plan.txt" 2>&1; then
  note "manifest with [$PRECISIONS] refused ($(tail -1 "$OUT/logs/plan.txt")); building fp16 only"
  PRECISIONS=fp16
  write_manifest fp16
fi
t=$(now)
if pw build "$work/qwen2.yaml" --key "$work/test_only_gpu.key" --out "$work/qwen2.bundle" \
     --json "$OUT/logs/build.json" > "$OUT/logs/build.out" 2> "$OUT/logs/build.err"; then
  note "build ok in $(elapsed "$t") s"
else
  note "build failed: $(tail -5 "$OUT/logs/build.err")"
fi
cat "$OUT/logs/build.out" "$OUT/logs/build.err" | grep -E "ok |FAILED|hit proof|warning" | tee "$OUT/hit_proof_lines.txt" >&2
"$PYTHON" - "$OUT/logs/build.json" > "$OUT/hit_proof.json" <<'PY'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except Exception as e:
    print(json.dumps({"error": str(e)})); sys.exit(0)
out = []
for job in report.get("jobs", []):
    r = job.get("report") or {}
    out.append({"job": job.get("id") or r.get("job"), "hit_proof": r.get("hit_proof")})
print(json.dumps(out, indent=2))
PY

root="$work/root"
if [ -d "$work/qwen2.bundle" ]; then
  pwr install "$work/qwen2.bundle" --trust "$work/test_only_gpu.pub" --root "$root" \
    > "$OUT/logs/install.out" 2> "$OUT/logs/install.err" || note "install failed: $(tail -3 "$OUT/logs/install.err")"
  pwr status --root "$root" > "$OUT/logs/status.txt" 2>&1
fi

# --- cold vs exec --audit vs warm in place -----------------------------------
# shellcheck disable=SC2046
for p in $PRECISIONS; do
  for i in $(seq 1 "$RUNS"); do
    dir="$work/cold-$p-$i"; log="$OUT/logs/cold-$p-$i"; t=$(now)
    if env $(cache_env "$dir") "$PYTHON" "$SCRIPT" "${model_args[@]}" --precision "$p" > "$log.json" 2> "$log.err"; then
      record "$p" cold "$i" "$log.json" "$(elapsed "$t")"
    else note "cold $p $i failed: $(tail -3 "$log.err")"; fi
    log="$OUT/logs/warm-$p-$i"; t=$(now)
    if env $(cache_env "$dir") "$PYTHON" "$SCRIPT" "${model_args[@]}" --precision "$p" > "$log.json" 2> "$log.err"; then
      record "$p" warm_in_place "$i" "$log.json" "$(elapsed "$t")"
    else note "warm $p $i failed: $(tail -3 "$log.err")"; fi
    if [ -d "$root" ]; then
      cp -a "$root" "$work/root-$p-$i"
      log="$OUT/logs/exec-$p-$i"; t=$(now)
      if pwr exec --root "$work/root-$p-$i" --audit "$log.audit.json" -- env LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" \
           "$PYTHON" "$SCRIPT" "${model_args[@]}" --precision "$p" > "$log.json" 2> "$log.err"; then
        record "$p" exec "$i" "$log.json" "$(elapsed "$t")" \
          "{\"audit\": $("$PYTHON" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["summary"]))' "$log.audit.json" 2>/dev/null || echo null)}"
      else note "exec $p $i failed: $(tail -3 "$log.err")"; fi
      rm -rf "$work/root-$p-$i"
    fi
  done
done

"$PYTHON" - "$samples" "$OUT/hit_proof_lines.txt" > "$OUT/summary.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("# Qwen2 (random weights) torch.compile: hit proof and start times\n")
print("## hit proof lines from `prewarm build`\n```")
print(open(sys.argv[2]).read().strip())
print("```\n")
print("| precision | mode | runs | median wall s | median compile+first s |")
print("|---|---|---|---|---|")
for p in sorted({r["precision"] for r in rows}):
    for mode in ("cold", "exec", "warm_in_place"):
        sel = [r for r in rows if r["precision"] == p and r["mode"] == mode]
        if sel:
            print(f"| {p} | {mode} | {len(sel)} | {statistics.median(r['wall_s'] for r in sel):.2f} | "
                  f"{statistics.median(r['first_call_s'] for r in sel):.2f} |")
audits = [r for r in rows if r["mode"] == "exec" and r.get("audit")]
if audits:
    print("\n## exec --audit\n")
    for r in audits:
        print(f"- {r['precision']} run {r['run']}: {r['audit']}")
PY
cat "$OUT/summary.md" >&2
