#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine, no prewarm involved: why does torch.compile's
# max-autotune tune and compile again in a process whose caches are warm in
# place? For each variant a cold fill, then WARM_RUNS processes on the same
# cache directories, every one with bench/command/torch_cache_diag loaded
# (autotune cache lookups and saves, Triton compiles and their keys); the
# .best_config files are kept after each run (best_config-RUN.tgz).
#   static   PyTorch's defaults (static CUDA launcher on)
#   dynamo   as prewarm's dynamo kind runs it: TORCH_CACHING_PRECOMPILE=1,
#            static CUDA launcher off (Dynamo's frames saved at the fill's exit)
# Also SMOKE cases: one cold run each of other workload options, side by side,
# to see that they run and agree with eager.
# Env: MODEL_ARGS, MODE (max-autotune-no-cudagraphs), VARIANTS ("static dynamo"), WARM_RUNS (2),
#      SMOKE ("--mode reduce-overhead|--dynamic mark --batches 2,4|--graph-break --sampler"), OUT.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$repo/out/gpu_torch_autotune_diag}
MODEL_ARGS=${MODEL_ARGS:-"--arch llama --layers 2 --hidden 1024 --heads 16 --kv-heads 4 --vocab 32000 --prompt 64 --decode 2"}
MODE=${MODE:-max-autotune-no-cudagraphs}
VARIANTS=${VARIANTS:-"static dynamo"}
WARM_RUNS=${WARM_RUNS:-2}
SMOKE=${SMOKE:-"--mode reduce-overhead|--dynamic mark --batches 2,4|--graph-break --sampler"}
SCRIPT=$repo/bench/command/qwen2_compile_warmup.py
work=$(mktemp -d /tmp/prewarm-autotune-diag.XXXXXX)
mkdir -p "$OUT"
read -r -a MODEL <<< "$MODEL_ARGS"

variant() { # NAME
  local v=$1 dir="$work/$1" extra=()
  mkdir -p "$dir/inductor" "$dir/triton" "$dir/cuda"
  local -a env_vars=(TORCHINDUCTOR_CACHE_DIR="$dir/inductor" TRITON_CACHE_DIR="$dir/triton" CUDA_CACHE_PATH="$dir/cuda"
    PYTHONPATH="$repo/bench/command/torch_cache_diag" PREWARM_DIAG_LOG="$OUT/diag-$v.jsonl")
  [ "$v" = dynamo ] && env_vars+=(TORCH_CACHING_PRECOMPILE=1 TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0) && extra=(--save-megacache "$dir/mega.bin")
  local i
  for i in $(seq 0 "$WARM_RUNS"); do
    local -a args=("${MODEL[@]}" --mode "$MODE" --precision bf16)
    [ "$i" = 0 ] && args+=("${extra[@]}")
    env "${env_vars[@]}" PREWARM_DIAG_RUN="$i" python3 "$SCRIPT" "${args[@]}" > "$OUT/$v-$i.json" 2> "$OUT/$v-$i.err"
    echo "$v run $i: rc $? $(tail -c 400 "$OUT/$v-$i.json")"
    (cd "$dir/inductor" && find . -name '*.best_config' | tar -czf "$OUT/best_config-$v-$i.tgz" -T - 2>/dev/null)
    echo "$v run $i: triton entries $(find "$dir/triton" -mindepth 1 -maxdepth 1 -type d | wc -l), inductor/triton $(find "$dir/inductor/triton" -mindepth 2 -maxdepth 2 -type d 2>/dev/null | wc -l), best_config $(find "$dir/inductor" -name '*.best_config' | wc -l)"
  done > "$OUT/$v.log" 2>&1
}
smoke() { # INDEX ARGS
  local dir="$work/smoke$1"; mkdir -p "$dir"
  read -r -a more <<< "$2"
  env TORCHINDUCTOR_CACHE_DIR="$dir/inductor" TRITON_CACHE_DIR="$dir/triton" python3 "$SCRIPT" "${MODEL[@]}" "${more[@]}" \
    --precision bf16 > "$OUT/smoke$1.json" 2> "$OUT/smoke$1.err"
  echo "smoke $1 ($2): rc $? $(tail -c 600 "$OUT/smoke$1.json")" > "$OUT/smoke$1.log"
}
for v in $VARIANTS; do variant "$v" & done
i=0; IFS='|' read -r -a smokes <<< "$SMOKE"
for s in "${smokes[@]}"; do [ -n "$s" ] || continue; i=$((i + 1)); smoke "$i" "$s" & done
wait
cat "$OUT"/*.log
for v in $VARIANTS; do
  echo "== $v"; python3 "$repo/bench/command/torch_cache_diag/summarize.py" "$OUT/diag-$v.jsonl" | tee "$OUT/diag-$v.md"
done
rm -rf "$work"
