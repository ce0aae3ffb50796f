#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: Qwen2 (bench/command/qwen2_compile_warmup.py) first
# compiled call and first token from process start, by cache state, with
# prewarm's dynamo kind (Inductor's cache plus Dynamo's precompiled frames:
# no tracing in a fresh process) beside the inductor kind:
#   cold       empty TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR, CUDA_CACHE_PATH
#   warm       the directories one earlier run filled (warm in place)
#   megacache  empty directories + load_cache_artifacts() of the saved blob
#   inductor   prewarm build (triton, inductor, cuda; --capture-root) ->
#              install -> exec, on a fresh copy of the root at the same path
#   dynamo     the same with kinds triton, dynamo, cuda
# Modes interleaved round by round; every run checks compiled vs eager.
# Prepare on the build host: bench/command/make_gpu_carry.sh BUILD_DIR; carry .carry/gpu.
# Env: RUNS (3), PRECISIONS ("bf16"), MODES ("cold warm megacache inductor dynamo"), BUDGET (s),
#      MODEL_ARGS (default: Qwen2.5-0.5B dimensions), OUT (./out/gpu_torch_dynamo), PYTHON.
# Writes OUT/samples.jsonl, OUT/summary.md, OUT/env.txt, OUT/logs/.
set -uo pipefail
RUNS=${RUNS:-3}
PRECISIONS=${PRECISIONS:-bf16}
MODES=${MODES:-"cold warm megacache inductor dynamo"}
BUDGET=${BUDGET:-100000} # seconds: no new round starts after it
PYTHON=${PYTHON:-python3}
read -r -a MODEL <<< "${MODEL_ARGS:---layers 24 --hidden 896 --heads 14 --kv-heads 2 --vocab 151936 --prompt 64 --decode 1}"
repo=$(cd "$(dirname "$0")/../.." && pwd)
carry="$repo/.carry/gpu"
SCRIPT="$repo/bench/command/qwen2_compile_warmup.py"
OUT=${OUT:-$repo/out/gpu_torch_dynamo}
mkdir -p "$OUT/logs"
work=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-gpu-dynamo.XXXXXX")
trap 'rm -rf "$work"' EXIT
samples="$OUT/samples.jsonl"; : > "$samples"
note() { echo "== $*" | tee -a "$OUT/summary.log" >&2; }
[ -x "$carry/bin/prewarm" ] || { note "$carry/bin/prewarm missing (make_gpu_carry.sh)"; exit 1; }
mkdir -p "$work/ldlib"
for lib in "$carry"/lib/*; do
  [ -e "$lib" ] || continue
  ldconfig -p | grep -q "^[[:space:]]*$(basename "$lib") " || ln -s "$lib" "$work/ldlib/"
done
PW_LD="$work/ldlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pw() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/prewarm" "$@"; }
pwr() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/prewarm-runtime" "$@"; }
pci=$(nvidia-smi --query-gpu=pci.device_id --format=csv,noheader 2>/dev/null | head -1 | tr 'A-F' 'a-f')
case "$pci" in 0x2335*) target=h200 ;; *) target=h100 ;; esac
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  "$PYTHON" -c 'import torch, transformers, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__)'
  echo "target $target; model ${MODEL[*]}"; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt" >&2
pw keygen --out "$work/test_only_gpu" > /dev/null 2>&1 || { note "keygen failed"; exit 1; }
export PREWARM_PYTHON="$PYTHON"
fresh() { mkdir -p "$1/inductor" "$1/triton" "$1/cuda"
  echo "TORCHINDUCTOR_CACHE_DIR=$1/inductor TRITON_CACHE_DIR=$1/triton CUDA_CACHE_PATH=$1/cuda CUDA_CACHE_MAXSIZE=4294967296"; }
now() { date +%s.%N; }
since() { "$PYTHON" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$1" "$(now)"; }
record() { # MODE PRECISION ROUND JSONFILE WALL
  "$PYTHON" -c 'import json,sys; r=json.loads(open(sys.argv[4]).read().strip().splitlines()[-1]); r.update(mode=sys.argv[1], precision=sys.argv[2], round=int(sys.argv[3]), wall_s=float(sys.argv[5])); print(json.dumps(r))' "$@" >> "$samples"
}

for p in $PRECISIONS; do
  # The fill is a cold run too: recorded as cold round 0 (with MODES lacking
  # cold, the only cold sample; saving the Mega-Cache comes after its timings).
  t=$(now)
  # shellcheck disable=SC2046
  if env $(fresh "$work/fill-$p") "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" --save-megacache "$work/mega-$p.bin" \
       > "$OUT/logs/fill-$p.json" 2> "$OUT/logs/fill-$p.err"; then
    record cold "$p" 0 "$OUT/logs/fill-$p.json" "$(since "$t")"
  else note "fill $p failed: $(tail -3 "$OUT/logs/fill-$p.err")"; fi
  for kind in inductor dynamo; do
    case " $MODES " in *" $kind "*) ;; *) continue ;; esac
    root="$work/root-$kind-$p"
    cat > "$work/$kind-$p.yaml" <<YAML
version: 1
models:
  - name: qwen2
    command:
      argv: [$PYTHON, $SCRIPT, $(printf '"%s", ' "${MODEL[@]}")--precision, "{precision}"]
      timeout: 30m
      kinds: [triton, $kind, cuda]
precisions: [$p]
targets: [$target]
YAML
    t=$(now)
    pw build "$work/$kind-$p.yaml" --key "$work/test_only_gpu.key" --out "$work/$kind-$p.bundle" --capture-root "$root" \
      > /dev/null 2> "$OUT/logs/build-$kind-$p.err" || { note "build $kind $p failed: $(tail -5 "$OUT/logs/build-$kind-$p.err")"; continue; }
    note "build $kind $p: $(since "$t") s; $(grep -o 'hit proof: [^;]*' "$OUT/logs/build-$kind-$p.err" | tr '\n' ' ')"
    pwr install "$work/$kind-$p.bundle" --trust "$work/test_only_gpu.pub" --root "$root" > /dev/null 2> "$OUT/logs/install-$kind-$p.err" \
      || note "install $kind $p failed: $(tail -3 "$OUT/logs/install-$kind-$p.err")"
    cp -a "$root" "$work/pristine-$kind-$p"
  done
  for i in $(seq 1 "$RUNS"); do
    if [ "$SECONDS" -gt "$BUDGET" ]; then note "budget of $BUDGET s spent: $((i - 1)) rounds"; break; fi
    for mode in $MODES; do
      log="$OUT/logs/$mode-$p-$i"; t=$(now); rc=0
      case $mode in
        # shellcheck disable=SC2046
        cold) env $(fresh "$work/cold-$p-$i") "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" > "$log.json" 2> "$log.err" || rc=$? ;;
        warm) rm -rf "$work/warm"; cp -a "$work/fill-$p" "$work/warm"
              # shellcheck disable=SC2046
              env $(fresh "$work/warm") "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" > "$log.json" 2> "$log.err" || rc=$? ;;
        # shellcheck disable=SC2046
        megacache) env $(fresh "$work/mega-$p-$i") "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" --load-megacache "$work/mega-$p.bin" \
                     > "$log.json" 2> "$log.err" || rc=$? ;;
        inductor|dynamo) root="$work/root-$mode-$p"; rm -rf "$root"; cp -a "$work/pristine-$mode-$p" "$root"
              pwr exec --root "$root" --audit "$log.audit.json" -- "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" \
                > "$log.json" 2> "$log.err" || rc=$? ;;
      esac
      if [ "$rc" -eq 0 ]; then record "$mode" "$p" "$i" "$log.json" "$(since "$t")"
      else note "$mode $p round $i failed: $(tail -3 "$log.err")"; fi
    done
  done
done
"$PYTHON" - "$samples" > "$OUT/summary.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| precision | mode | n | first compiled call s (median) | of which torch.compile() s | first token from start s | dynamo hits |")
print("|---|---|---|---|---|---|---|")
med = {}
for p in sorted({r["precision"] for r in rows}):
    for m in ("cold", "warm", "megacache", "inductor", "dynamo"):
        rs = [r for r in rows if r["precision"] == p and r["mode"] == m]
        if not rs:
            continue
        fc = statistics.median(r["first_compiled_call_s"] + r.get("megacache_load_s", 0.0) for r in rs)
        ft = statistics.median(r["first_result_s"] for r in rs)
        med[(p, m)] = (fc, ft)
        print(f"| {p} | {m} | {len(rs)} | {fc:.2f} | {statistics.median(r['compile_s'] for r in rs):.2f} | {ft:.2f} | {sum(r.get('dynamo_cache_hit', 0) for r in rs)} |")
    for a, b in (("dynamo", "warm"), ("dynamo", "megacache"), ("inductor", "warm"), ("dynamo", "cold")):
        if (p, a) in med and (p, b) in med:
            print(f"\n{p}: {a}/{b}: first compiled call {med[(p, a)][0] / med[(p, b)][0]:.2f}, first token {med[(p, a)][1] / med[(p, b)][1]:.2f}")
PY
cat "$OUT/summary.md"
