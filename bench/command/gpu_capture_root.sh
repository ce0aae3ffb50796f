#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: does capturing at the install root (`prewarm build
# --capture-root ROOT`, prewarm/command/capture_root.hpp) bring torch.compile
# through the bundle within 1.1x of warm in place? The H100 hit proof
# (bench/results/gpu-h100-hit-proof) found 16 of 44 Triton kernels compiled
# again when installed elsewhere than they were captured: their key includes
# a path. Here, for the Qwen2 warm-up (bench/command/qwen2_compile_warmup.py,
# random weights, 2 layers, hidden 256), one precision (bf16):
#   1. `prewarm build --capture-root ROOT` (kinds inductor, triton, cuda;
#      verify: warn): the hit proof line, re-run at ROOT;
#   2. `prewarm-runtime install --root ROOT`;
#   3. a cold run fills in-place caches (empty directories), then RUNS pairs of
#      fresh processes, interleaved (order alternating per pair): warm in place
#      (those directories again) and through the bundle (`prewarm-runtime exec
#      --root ROOT --audit`, on a fresh install at ROOT each time, so every run
#      starts from what the bundle holds and at the same path).
# Prepare on the build host:  bench/command/make_gpu_carry.sh BUILD_DIR
# Run from the repository root, carrying .carry/gpu, in one call (~4-6 min):
#   OUT=$OUT bench/command/gpu_capture_root.sh
# Env: PRECISION (bf16), QWEN2_SCRIPT and DRY_RUN=1 TARGET=cpu (a stand-in, for a dry run), RUNS (5), LAYERS (2), HIDDEN (256), PYTHON (python3),
#      ROOT (absent or empty; default a fresh directory under TMPDIR),
#      OUT (./out/gpu_capture_root).
# Writes OUT/samples.jsonl, OUT/summary.md, OUT/env.txt, OUT/hit_proof_lines.txt,
# OUT/logs/ (build, install, per-run JSON, stderr and audits).
set -uo pipefail

PRECISION=${PRECISION:-bf16}
RUNS=${RUNS:-5}
LAYERS=${LAYERS:-2}
HIDDEN=${HIDDEN:-256}
PYTHON=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
SCRIPT=${QWEN2_SCRIPT:-$repo/bench/command/qwen2_compile_warmup.py}
gpu_bench=gpu_capture_root # the shared preamble: OUT, work, samples, note, die, gpu_bench_env
# DRY_RUN=1 (plumbing only, on a host without a GPU): TARGET=cpu QWEN2_SCRIPT=<stand-in>.
gpu_bench_dry_run=${DRY_RUN:-}
# shellcheck source=bench/command/gpu_carry.sh
source "$repo/bench/command/gpu_carry.sh"
ROOT=${ROOT:-$work/opt/prewarm}
model_versions() {
  "$PYTHON" -c 'import torch, triton, transformers, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "transformers", transformers.__version__)' 2>&1
  echo "model: Qwen2ForCausalLM random weights, layers $LAYERS, hidden $HIDDEN, precision $PRECISION"
  echo "capture root: $ROOT"
}
gpu_bench_env model_versions

# record MODE RUN JSONFILE WALL_S [EXTRA_JSON]
record() {
  "$PYTHON" - "$@" >> "$samples" <<'PY'
import json, sys
mode, run, path, wall = sys.argv[1:5]
extra = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
row = json.loads(open(path).read().strip().splitlines()[-1])
row.update({"mode": mode, "run": int(run), "wall_s": float(wall)})
row.update(extra)
print(json.dumps(row))
PY
}
model_args=(--layers "$LAYERS" --hidden "$HIDDEN" --precision "$PRECISION")

# --- build at the root, with the hit proof -----------------------------------
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
precisions: [$PRECISION]
targets: [$target]
bundle:
  channel: bench/qwen2
YAML
t=$(now)
if pw build "$work/qwen2.yaml" --key "$work/test_only_gpu.key" --out "$work/qwen2.bundle" --capture-root "$ROOT" \
     --json "$OUT/logs/build.json" > "$OUT/logs/build.out" 2> "$OUT/logs/build.err"; then
  note "build --capture-root $ROOT ok in $(elapsed "$t") s"
else
  note "build failed: $(tail -5 "$OUT/logs/build.err")"
fi
cat "$OUT/logs/build.out" "$OUT/logs/build.err" | grep -E "ok |FAILED|hit proof|warning|error" | tee "$OUT/hit_proof_lines.txt" >&2
[ ! -e "$ROOT" ] || [ -z "$(ls -A "$ROOT")" ] || note "the root is not as found after the build: $(ls -A "$ROOT")"
[ -d "$work/qwen2.bundle" ] || die "no bundle: see $OUT/logs/build.err"

fresh_install() { # LOG: ROOT holds exactly the bundle
  rm -rf "$ROOT"
  pwr install "$work/qwen2.bundle" --trust "$work/test_only_gpu.pub" --root "$ROOT" > "$1.out" 2> "$1.err"
}
fresh_install "$OUT/logs/install" || die "install failed: $(tail -3 "$OUT/logs/install.err")"
pwr status --root "$ROOT" > "$OUT/logs/status.txt" 2>&1

# --- warm in place vs through the bundle, interleaved -------------------------
inplace="$work/inplace"
mkdir -p "$inplace/inductor" "$inplace/triton" "$inplace/cuda"
inplace_env=(TORCHINDUCTOR_CACHE_DIR="$inplace/inductor" TRITON_CACHE_DIR="$inplace/triton" CUDA_CACHE_PATH="$inplace/cuda"
             CUDA_CACHE_MAXSIZE=4294967296 TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1)
warm() { # RUN
  local log="$OUT/logs/warm-$1" t; t=$(now)
  if env "${inplace_env[@]}" "$PYTHON" "$SCRIPT" "${model_args[@]}" > "$log.json" 2> "$log.err"; then
    record warm_in_place "$1" "$log.json" "$(elapsed "$t")"
  else note "warm $1 failed: $(tail -3 "$log.err")"; fi
}
through_bundle() { # RUN
  local log="$OUT/logs/exec-$1" t
  fresh_install "$log.install" || { note "install before exec $1 failed"; return; }
  t=$(now)
  if pwr exec --root "$ROOT" --audit "$log.audit.json" -- env LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" \
       "$PYTHON" "$SCRIPT" "${model_args[@]}" > "$log.json" 2> "$log.err"; then
    record through_bundle "$1" "$log.json" "$(elapsed "$t")" \
      "{\"audit\": $("$PYTHON" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["summary"]))' "$log.audit.json" 2>/dev/null || echo null)}"
  else note "exec $1 failed: $(tail -3 "$log.err")"; fi
}
t=$(now)
env "${inplace_env[@]}" "$PYTHON" "$SCRIPT" "${model_args[@]}" > "$OUT/logs/cold.json" 2> "$OUT/logs/cold.err" \
  && record cold 0 "$OUT/logs/cold.json" "$(elapsed "$t")" || note "cold run failed: $(tail -3 "$OUT/logs/cold.err")"
for i in $(seq 1 "$RUNS"); do
  if [ $((i % 2)) -eq 1 ]; then warm "$i"; through_bundle "$i"; else through_bundle "$i"; warm "$i"; fi
done
rm -rf "$ROOT"

"$PYTHON" - "$samples" "$OUT/hit_proof_lines.txt" > "$OUT/summary.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("# Qwen2 (random weights) torch.compile captured at the install root (--capture-root)\n")
print("## `prewarm build --capture-root` job and hit proof lines\n```")
print(open(sys.argv[2]).read().strip())
print("```\n")
print("| mode | runs | median first_call s | median wall s |")
print("|---|---|---|---|")
med = {}
for mode in ("cold", "warm_in_place", "through_bundle"):
    sel = [r for r in rows if r["mode"] == mode]
    if sel:
        med[mode] = (statistics.median(r["first_call_s"] for r in sel), statistics.median(r["wall_s"] for r in sel))
        print(f"| {mode} | {len(sel)} | {med[mode][0]:.2f} | {med[mode][1]:.2f} |")
if "warm_in_place" in med and "through_bundle" in med:
    fc = med["through_bundle"][0] / med["warm_in_place"][0]
    wall = med["through_bundle"][1] / med["warm_in_place"][1]
    print(f"\nthrough the bundle / warm in place: first_call {fc:.2f}x, wall {wall:.2f}x "
          f"(goal <= 1.1x: {'met' if fc <= 1.1 else 'missed'} on first_call)")
audits = [r for r in rows if r["mode"] == "through_bundle" and r.get("audit")]
if audits:
    print("\n## exec --audit per run\n")
    for r in audits:
        print(f"- run {r['run']}: {r['audit']}")
PY
cat "$OUT/summary.md" >&2
