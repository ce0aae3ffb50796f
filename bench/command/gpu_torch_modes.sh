#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: torch.compile beyond the default mode, through
# bench/command/gpu_torch_dynamo.sh, one case a directory under OUT:
#   default  Llama bf16 (the base model below), torch.compile's default mode
#   mat      mode max-autotune-no-cudagraphs (GEMM templates, coordinate descent)
#   ma       mode max-autotune (the same with CUDA graphs)
#   ro       mode reduce-overhead (CUDA graphs)
#   dyn      dynamic shapes: mark_dynamic on batch and sequence, prefills at
#            batch 1, 2 and 4 and decode steps (several lengths)
#   gb       a step function with a graph break (two graphs and a resume
#            function) and a second compiled function (a top-k sampler)
#   gap      a small Qwen2, default mode, with the diagnosis hooks: what the
#            build's hit proof and an audited start each opened
# Per case: the fill (a cold run, its Mega-Cache saved), the anypath bundle
# (kinds triton, dynamo, cuda, pycache; no --capture-root; installed at
# another path), the eager baseline; then RUNS rounds of MODES, each sample a
# fresh process, every bundle sample under `exec --audit`.
# STAGE: prepare (every case's fill and build at once: their times are no
# figures), rounds (cases one after another), all (both). WORK keeps the
# prepared state between calls on one machine; a rounds stage whose case was
# not prepared prepares it first.
# Env: CASES ("default ro"), RUNS (3), MODES ("warm megacache anypath"), DIAG_CASES ("mat gap": the
#      diagnosis hooks, torch_cache_diag, in builds and samples: no figures from them), DEADLINE
#      (seconds from the start after which no case's rounds, and no round, start; default 540),
#      FILL_MODE ("cold ": each case's fill, a cold sample; "" leaves it out where MODES need none), OUT, WORK.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$repo/out/gpu_torch_modes}
WORK=${WORK:-/tmp/prewarm-torch-modes}
CASES=${CASES:-"default ro"}
RUNS=${RUNS:-3}
MODES=${MODES:-"warm megacache anypath"}
DIAG_CASES=${DIAG_CASES:-"mat gap"}
STAGE=${STAGE:-all}
DEADLINE=${DEADLINE:-540}
BASE="--layers 2 --hidden 1024 --heads 16 --kv-heads 4 --vocab 32000 --prompt 64 --decode 2"
mkdir -p "$OUT" "$WORK"
start=$SECONDS

case_env() { # CASE: the variables of gpu_torch_dynamo.sh for it
  local args config=llama:bf16
  case $1 in
    default) args="$BASE" ;;
    mat) args="$BASE --mode max-autotune-no-cudagraphs" ;;
    ma) args="$BASE --mode max-autotune" ;;
    ro) args="$BASE --mode reduce-overhead" ;;
    dyn) args="$BASE --dynamic mark --batches 2,4" ;;
    gb) args="$BASE --graph-break --sampler" ;;
    gap) args="--layers 2 --hidden 256 --heads 4 --kv-heads 2 --vocab 4096 --prompt 32 --decode 2"; config=qwen2:bf16 ;;
    *) return 1 ;;
  esac
  local diag=0
  case " $DIAG_CASES " in *" $1 "*) diag=1 ;; esac
  echo "CONFIGS=$config" "MODEL_ARGS=$args" "DIAG=$diag" "WORK=$WORK/$1" "OUT=$OUT/$1" "MODES=${FILL_MODE-cold }$MODES"
}
run_case() { # CASE STAGE [RUNS]
  local vars
  vars=$(case_env "$1") || { echo "gpu_torch_modes: unknown case $1" >&2; return 1; }
  local -a assignments
  mapfile -t assignments < <(tr ' ' '\n' <<< "$vars" | awk '/^[A-Z_]+=/{ if (line) print line; line=$0; next } { line = line " " $0 } END { print line }')
  env "${assignments[@]}" STAGE="$2" RUNS="${3:-$RUNS}" COLD_RUNS=0 BUDGET=$((DEADLINE - (SECONDS - start))) bash "$repo/bench/command/gpu_torch_dynamo.sh" \
    > "$OUT/$1.$2.log" 2>&1
  touch "$WORK/$1/.$2-done"
}

if [ "$STAGE" = prepare ] || [ "$STAGE" = all ]; then
  for c in $CASES; do mkdir -p "$WORK/$c"; run_case "$c" prepare & done
  wait
  echo "gpu_torch_modes: prepared $CASES in $((SECONDS - start)) s" | tee -a "$OUT/modes.log"
fi
if [ "$STAGE" = rounds ] || [ "$STAGE" = all ]; then
  for c in $CASES; do
    if [ $((SECONDS - start)) -gt "$DEADLINE" ]; then echo "gpu_torch_modes: $c skipped: deadline" | tee -a "$OUT/modes.log"; continue; fi
    [ -e "$WORK/$c/.prepare-done" ] || { mkdir -p "$WORK/$c"; run_case "$c" prepare; }
    t=$SECONDS; run_case "$c" rounds
    echo "gpu_torch_modes: $c rounds in $((SECONDS - t)) s" | tee -a "$OUT/modes.log"
  done
fi
for c in $CASES; do
  [ -s "$OUT/$c/samples.jsonl" ] && python3 "$repo/bench/command/summarize_gpu_torch.py" "$OUT/$c/samples.jsonl" > "$OUT/$c/summary.md"
  [ -d "$OUT/$c/logs" ] && python3 "$repo/bench/command/summarize_torch_audits.py" "$OUT/$c/logs" > "$OUT/$c/audits.md" 2>&1
  opens=()
  [ "$c" = gap ] && opens=(--opens)
  ls "$OUT/$c/logs"/diag-*.jsonl > /dev/null 2>&1 &&
    python3 "$repo/bench/command/torch_cache_diag/summarize.py" "$OUT/$c/logs"/diag-*.jsonl "${opens[@]}" > "$OUT/$c/diag.md" 2>&1
  { echo "== $c"; cat "$OUT/$c/summary.md" "$OUT/$c/audits.md" 2>/dev/null | head -40; } >> "$OUT/modes.log"
done
cat "$OUT/modes.log"
