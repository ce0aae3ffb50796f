#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares what bench/command/gpu_torch_compile.sh needs on the GPU machine,
# ON THE BUILD HOST (the GPU machine has no compiler toolchain for prewarm):
#
#   bench/command/make_gpu_carry.sh BUILD_DIR     (default build)
#
# BUILD_DIR must hold built prewarm, prewarm-runtime (the front), prewarm-runtime-full and
# command_capture (ninja -C BUILD_DIR prewarm prewarm-runtime prewarm-runtime-full command_capture).
# Writes .carry/gpu/:
#   bin/     prewarm, prewarm-runtime, prewarm-runtime-full (beside the front, where it looks),
#            command_capture (stripped), ocl_build_probe
#   lib/     shared libraries they need beyond libc/libm/libstdc++/libgcc_s; the
#            GPU script links in only those whose soname the GPU host lacks
#   opencl/  Debian's ICD loader libOpenCL.so.1, used only if the host has none
# Then carry ".carry/gpu" to the device run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out="$root/.carry/gpu"

for t in prewarm/cli/prewarm runtime/cli/prewarm-runtime runtime/cli/prewarm-runtime-full tests/integration/command/command_capture; do
  [ -x "$build/$t" ] || { echo "make_gpu_carry: $build/$t not built" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/opencl"
for t in prewarm/cli/prewarm runtime/cli/prewarm-runtime runtime/cli/prewarm-runtime-full tests/integration/command/command_capture; do
  cp "$build/$t" "$out/bin/"
  strip "$out/bin/$(basename "$t")"
done
# The probe dlopens libOpenCL.so.1 and links libstdc++ statically: it needs
# nothing from this host at run time but libc.
g++ -std=c++20 -O2 -Wall -Wextra -static-libstdc++ -static-libgcc \
  -o "$out/bin/ocl_build_probe" "$here/ocl_build_probe.cpp" -ldl
strip "$out/bin/ocl_build_probe"

core='^(linux-vdso|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux|libpthread\.so|libdl\.so|librt\.so)'
# ICU (31 MiB of data) comes in through libarchive -> libxml2 only: the GPU
# machine's own libxml2 is used there (as bench/gpu/make_gpu_carry.sh does),
# so the carry and the tree stay under the 64 MiB a device run takes.
core="${core%)}|libicu|libxml2)"
for bin in "$out"/bin/*; do
  ldd "$bin" | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r soname path; do
  if [[ "$soname" =~ $core ]]; then
    continue
  fi
  if [ "$soname" = "libOpenCL.so.1" ]; then
    cp -L "$path" "$out/opencl/$soname"
  else
    cp -L "$path" "$out/lib/$soname"
  fi
done
if [ ! -e "$out/opencl/libOpenCL.so.1" ]; then
  cp -L "$(ldconfig -p | awk '/libOpenCL.so.1 / && !found { print $NF; found = 1 }')" "$out/opencl/libOpenCL.so.1"
fi
du -sh "$out" "$out"/*
echo "carry: .carry/gpu"
