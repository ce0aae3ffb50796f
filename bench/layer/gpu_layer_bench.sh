#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One call on the GPU machine (NVIDIA H100, NVIDIA OpenCL): clpeak
# --kernel-latency and the CLBlast GEMM client, each in fresh processes,
# median of ROUNDS, side by side:
#   cold           empty CUDA_CACHE_PATH (the ComputeCache), no layer
#   cache-warm     CUDA_CACHE_PATH filled by the previous run, no layer
#   served         empty CUDA_CACHE_PATH, the layer serving from a store recorded once
#   nothing        empty CUDA_CACHE_PATH, the layer in serve mode over an empty store
# The carry comes from bench/layer/make_gpu_carry.sh (run on the build host).
#
#   bash bench/layer/gpu_layer_bench.sh [ROUNDS]     (run from the repository root)
# Writes $OUT/layer-gpu.md (or ./layer-gpu.md) and prints it.
set -euo pipefail
rounds=${1:-5}
carry=${CARRY:-.carry/layer}
out=${OUT:-.}
[ -d "$carry" ] || { echo "gpu_layer_bench: no carry at $carry (bench/layer/make_gpu_carry.sh)" >&2; exit 1; }
carry=$(cd "$carry" && pwd)
work=$(mktemp -d /tmp/prewarm-layer-gpu.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The loader: the host's if it has one (ocl-icd >= 2.3.0 and the Khronos
# loader both read OPENCL_LAYERS), else Debian's from the carry.
libpath="$carry/lib"
ldconfig -p | grep -q 'libOpenCL.so.1 ' || libpath="$libpath:$carry/opencl"
export LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The NVIDIA ICD: containers often have the library but no vendors file.
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  nv=$(ldconfig -p | awk '/libnvidia-opencl.so.1 / { print $NF; exit }')
  [ -n "$nv" ] || { echo "gpu_layer_bench: no libnvidia-opencl.so.1 on this host" >&2; exit 1; }
  mkdir -p "$work/vendors"; echo "$nv" > "$work/vendors/nvidia.icd"
  export OCL_ICD_VENDORS="$work/vendors"
fi
layer="$carry/lib/libprewarm_opencl_layer.so"
export CUDA_CACHE_PATH="$work/cuda"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

wall_ms() { local t0 t1; t0=$(date +%s%N); "$@" > /dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

{
echo "| subject | cold ms | ComputeCache-warm ms | served by the layer ms | layer, nothing stored ms | served / warm | nothing / cold |"
echo "|---|---|---|---|---|---|---|"
for subject in "clpeak --kernel-latency" "clblast_gemm_client 1024"; do
  name=${subject%% *}
  set -- "$carry/bin/$name" ${subject#* }
  rm -rf "$CUDA_CACHE_PATH"
  OPENCL_LAYERS="$layer" PREWARM_LAYER=record PREWARM_PROGRAM_STORE="$work/store-$name" PREWARM_LAYER_LOG=1 "$@" > "$work/$name.record" 2>&1 \
    || { echo "record run of $subject failed:" >&2; tail "$work/$name.record" >&2; exit 1; }
  declare -A s=()
  for ((r = 0; r < rounds; r++)); do
    rm -rf "$CUDA_CACHE_PATH"; s[cold]+="$(wall_ms "$@") "
    s[warm]+="$(wall_ms "$@") "   # the cache the cold run just filled
    rm -rf "$CUDA_CACHE_PATH"
    s[served]+="$(OPENCL_LAYERS="$layer" PREWARM_LAYER=serve PREWARM_PROGRAM_STORE="$work/store-$name" wall_ms "$@") "
    rm -rf "$CUDA_CACHE_PATH"
    s[nothing]+="$(OPENCL_LAYERS="$layer" PREWARM_LAYER=serve PREWARM_PROGRAM_STORE="$work/empty" wall_ms "$@") "
  done
  declare -A m=()
  for k in cold warm served nothing; do m[$k]=$(tr ' ' '\n' <<< "${s[$k]}" | grep . | median); done
  echo "| $subject | ${m[cold]} | ${m[warm]} | ${m[served]} | ${m[nothing]} | $(ratio "${m[served]}" "${m[warm]}") | $(ratio "${m[nothing]}" "${m[cold]}") |"
  echo "<!-- $name samples: cold=[${s[cold]}] warm=[${s[warm]}] served=[${s[served]}] nothing=[${s[nothing]}] -->"
  rm -rf "$CUDA_CACHE_PATH"
  OPENCL_LAYERS="$layer" PREWARM_LAYER=audit PREWARM_PROGRAM_STORE="$work/store-$name" PREWARM_LAYER_AUDIT_LOG="$work/$name.audit" "$@" > /dev/null 2>&1
  echo "<!-- $name audit of a served run: $(grep -c '"event":"hit"' "$work/$name.audit") hits, $(grep -c '"event":"miss"' "$work/$name.audit") misses -->"
  unset s m
done
} | tee "$out/layer-gpu.md"
