#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: the three calls behind bench/results/gpu-h200-compile-modes-2/, each
# fitted in one device call of under 10 minutes (bench/command/gpu_torch_modes.sh does the
# work; the carry from bench/command/make_gpu_carry.sh build):
#   gpu_torch_modes_calls.sh 1   max-autotune (n=3) and max-autotune-no-cudagraphs (n=1) at
#                                another path; reduce-overhead in every mode (n=3)
#   gpu_torch_modes_calls.sh 2   max-autotune warm in place and Mega-Cache; dyn in every mode
#   gpu_torch_modes_calls.sh 3   gb in every mode (n=3); then what the installed dynamo kind's
#                                variables cost where nothing in the bundle matches (default
#                                mode, empty caches, PyTorch's defaults vs those variables, n=2)
# Each prepares its cases side by side (their times are no figures), then runs the rounds one
# case after another; no round starts past its deadline (seconds from the call's start).
# Writes R (default /tmp/r): a/ and b/ as gpu_torch_modes.sh's OUT, call.log, miss-*.json.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
R=${R:-/tmp/r}
M="$repo/bench/command/gpu_torch_modes.sh"
mkdir -p "$R"
until_s() { echo $(($1 - SECONDS)); }
modes() { # OUT-LETTER STAGE CASES MODES RUNS DEADLINE [FILL_MODE]
  env STAGE="$2" CASES="$3" MODES="$4" RUNS="$5" DEADLINE="$6" ${7+FILL_MODE="$7"} DIAG_CASES= \
    OUT="$R/$1" WORK="/tmp/w$1" bash "$M" > "$R/$1-$2-${3// /-}.log" 2>&1
  echo "$3 $2 done at $SECONDS s" | tee -a "$R/call.log"
}
miss_cost() { # the default mode on empty caches, PyTorch's defaults vs the installed variables
  local args="--layers 2 --hidden 1024 --heads 16 --kv-heads 4 --vocab 32000 --prompt 64 --decode 2 --arch llama --precision bf16"
  local i v
  for i in 1 2; do
    for v in plain installed; do
      [ "$SECONDS" -gt 500 ] && return
      rm -rf /tmp/c && mkdir -p /tmp/c/inductor /tmp/c/triton /tmp/c/cuda
      local extra=()
      [ "$v" = installed ] && extra=(TORCHINDUCTOR_COMPILE_THREADS=1 TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0
        TORCH_CACHING_PRECOMPILE=1 TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1)
      # shellcheck disable=SC2086
      env TORCHINDUCTOR_CACHE_DIR=/tmp/c/inductor TRITON_CACHE_DIR=/tmp/c/triton CUDA_CACHE_PATH=/tmp/c/cuda "${extra[@]}" \
        python3 "$repo/bench/command/qwen2_compile_warmup.py" $args > "$R/miss-$v-$i.json" 2> "$R/miss-$v-$i.err"
      echo "miss $v $i rc $? at $SECONDS s" | tee -a "$R/call.log"
    done
  done
}
case ${1:-} in
  1) modes a prepare "ma mat" anypath 3 540 "" & modes b prepare ro "warm megacache anypath" 3 540 & wait
     modes a rounds ma anypath 3 "$(until_s 330)" ""
     modes b rounds ro "warm megacache anypath" 3 "$(until_s 470)"
     modes a rounds mat anypath 1 "$(until_s 520)" "" ;;
  2) modes a prepare ma "warm megacache" 3 540 & modes b prepare dyn "warm megacache anypath" 3 540 & wait
     modes a rounds ma "warm megacache" 3 "$(until_s 360)"
     modes b rounds dyn "warm megacache anypath" 3 "$(until_s 480)" ;;
  3) modes b all gb "warm megacache anypath" 3 "$(until_s 300)"
     miss_cost ;;
  *) echo "usage: $0 1|2|3" >&2; exit 2 ;;
esac
