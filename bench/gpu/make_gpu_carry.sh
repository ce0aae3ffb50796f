#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares what bench/gpu/gpu_bench_run.sh needs on the GPU machine (no
# compiler, no package registry there), ON THE BUILD HOST:
#
#   bench/gpu/make_gpu_carry.sh BUILD_DIR     (default build)
#
# BUILD_DIR must hold (ninja -C BUILD_DIR prewarm prewarm-runtime
# prewarm_opencl_layer clblast_client). Writes .carry/bench/ (well under the
# 64 MiB a device run carries):
#   build/   the binaries bench/run expects, at their build-tree paths
#            (prewarm/cli/prewarm, runtime/cli/prewarm-runtime and -full, the OpenCL
#            layer, the CLBlast client), stripped
#   lib/     shared libraries they, clpeak and hashcat need beyond libc and
#            libstdc++ (libclblast, libminizip ...): linked in on the GPU
#            machine only where it lacks the soname
#   opencl/  Debian's ocl-icd libOpenCL.so.1 (reads OPENCL_LAYERS), used only
#            where the GPU machine has no ocl-icd
#   tools/   clpeak (Debian); hashcat/ with the files -m 0 -a 3 -O needs
#            (binary, module_00000, every OpenCL source as OpenCL.tar.xz,
#            tunings, hcstat2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out="$root/.carry/bench"
targets=(prewarm/cli/prewarm runtime/cli/prewarm-runtime runtime/cli/prewarm-runtime-full runtime/layer/libprewarm_opencl_layer.so
         tests/integration/real_programs/clblast_client)
for t in "${targets[@]}"; do
  [ -f "$build/$t" ] || { echo "make_gpu_carry: $build/$t not built" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/build" "$out/lib" "$out/opencl" "$out/tools"
for t in "${targets[@]}"; do
  mkdir -p "$out/build/$(dirname "$t")"
  cp "$build/$t" "$out/build/$t"
  strip "$out/build/$t"
done
command -v clpeak > /dev/null && cp "$(command -v clpeak)" "$out/tools/clpeak"
if command -v hashcat > /dev/null; then
  hc="$out/tools/hashcat"
  mkdir -p "$hc/bin" "$hc/share/OpenCL" "$hc/share/modules"
  cp "$(command -v hashcat)" "$hc/bin/hashcat"
  share=/usr/share/hashcat
  cp -L "$share/modules/module_00000.so" "$hc/share/modules/"
  cp -r "$share/tunings" "$share/hashcat.hcstat2" "$hc/share/"
  # Every kernel source, compressed (24 MB of text, about 2 MB packed): on
  # NVIDIA, -m 0 opened m00400-pure.cl too, so a hand-picked subset is not
  # enough.
  tar -C "$share" -cJf "$hc/share/OpenCL.tar.xz" OpenCL
  rmdir "$hc/share/OpenCL"
fi

core='^(linux-vdso|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux|libpthread\.so|libdl\.so|librt\.so)'
# ICU (31 MiB of data) comes in through libarchive -> libxml2 only: the GPU
# machine's own libxml2 (Ubuntu 24.04 with Python has it) is used there, so
# the carry stays under the 64 MiB a device run takes.
core="${core%)}|libicu)"
find "$out/build" "$out/tools" -type f \( -perm -u+x -o -name '*.so' \) | while read -r f; do
  ldd "$f" 2> /dev/null | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r soname path; do
  [[ "$soname" =~ $core ]] && continue
  if [ "$soname" = "libOpenCL.so.1" ]; then cp -L "$path" "$out/opencl/$soname"; else cp -L "$path" "$out/lib/$soname"; fi
done
[ -e "$out/opencl/libOpenCL.so.1" ] ||
  cp -L "$(ldconfig -p | awk '/libOpenCL.so.1 / && !found { print $NF; found = 1 }')" "$out/opencl/libOpenCL.so.1"
du -sh "$out" "$out"/*
echo "carry: .carry/bench (then on the GPU machine: bash bench/gpu/gpu_bench_run.sh)"
