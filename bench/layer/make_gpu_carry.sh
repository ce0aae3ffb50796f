#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares what bench/layer/gpu_layer_bench.sh needs on the GPU machine, ON
# THE BUILD HOST (as bench/command/make_gpu_carry.sh does):
#
#   bench/layer/make_gpu_carry.sh BUILD_DIR     (default build)
#
# BUILD_DIR must hold the built layer and clients
# (ninja -C BUILD_DIR prewarm_opencl_layer layer_test_app clblast_gemm_client).
# Writes .carry/layer/:
#   lib/     libprewarm_opencl_layer.so and the shared libraries the layer,
#            clpeak, CLBlast and the clients need beyond libc/libstdc++
#   bin/     clpeak (Debian), clblast_gemm_client, layer_test_app
#   opencl/  Debian's ocl-icd libOpenCL.so.1 (2.3.1, layers supported), used
#            only when the host has no loader
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out="$root/.carry/layer"
bins=("$build/tests/integration/layer/clblast_gemm_client/clblast_gemm_client"
      "$build/tests/integration/layer/layer_test_app/layer_test_app" "$(command -v clpeak)")
layer="$build/runtime/layer/libprewarm_opencl_layer.so"
for f in "$layer" "${bins[@]}"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "make_gpu_carry: $f not built or not installed" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/opencl"
cp "$layer" "$out/lib/"
strip "$out/lib/$(basename "$layer")"
for b in "${bins[@]}"; do cp "$b" "$out/bin/"; strip "$out/bin/$(basename "$b")"; done
core='^(linux-vdso|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux|libpthread\.so|libdl\.so|librt\.so)'
for f in "$out"/bin/* "$out"/lib/*.so; do
  ldd "$f" | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r soname path; do
  [[ "$soname" =~ $core ]] && continue
  if [ "$soname" = "libOpenCL.so.1" ]; then cp -L "$path" "$out/opencl/$soname"; else cp -L "$path" "$out/lib/$soname"; fi
done
du -sh "$out" "$out"/*
echo "carry: .carry/layer"
