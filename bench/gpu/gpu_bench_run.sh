#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One go on the GPU machine (NVIDIA, 16 cores, no compiler, no package
# registry): bench/run in full mode for the cases that fit, within about
# 8 minutes of wall time, results under $OUT.
#
# On the build host first:  bench/gpu/make_gpu_carry.sh BUILD_DIR   -> .carry/bench
# Then on the GPU machine, from the repository root, carrying .carry/bench:
#   bash bench/gpu/gpu_bench_run.sh
#
# Phases, in this order, each a bench/run of its own (results in
# $OUT/<phase>/: results.json, results.md, plots); a phase starts only while
# the time left (DEADLINE_S, default 470 s from the start) covers its
# estimate, and its --budget stops it starting new rounds in time:
#   third-party-nvidia  clpeak, CLBlast, pyopencl on NVIDIA OpenCL: cold /
#                       ComputeCache-warm / installed / layer-served / layer
#                       with nothing stored
#   install-noop        runtime_overhead of the default bundle (install no-op,
#                       env, exec vs the bare program; the bundle is built on
#                       this machine's PoCL)
#   third-party-pocl    clpeak and CLBlast on PoCL (this machine's CPU)
#   hashcat-nvidia      hashcat -m 0 on NVIDIA OpenCL (--backend-ignore-cuda)
#   first-result        prewarm run on NVIDIA OpenCL and PoCL (fp16, bf16)
#   torch-compile       Qwen2 bf16 under torch.compile
# PACK=1 leaves one results.tgz under $OUT instead of the tree.
# PHASES="a b ..." picks phases (default: all, in the order above: the last
# two were published at an earlier commit and come only when time is left).
#
# hashcat keeps its kernels beside itself when it does not run from the
# folder it was built for (/usr/bin, shared files in /usr/share/hashcat):
# as root on a machine without hashcat, the carried one is put there.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
carry=${CARRY:-$repo/.carry/bench}
OUT=${OUT:-$repo/out/gpu-bench}
DEADLINE_S=${DEADLINE_S:-470}
PHASES=${PHASES:-"third-party-nvidia install-noop third-party-pocl hashcat-nvidia first-result torch-compile"}
PYTHON=${PYTHON:-python3}
start=$(date +%s)
mkdir -p "$OUT"
log="$OUT/gpu_bench_run.log"
note() { echo "gpu_bench_run: $*" | tee -a "$log" >&2; }
[ -x "$carry/build/prewarm/cli/prewarm" ] || { note "no carry at $carry (bench/gpu/make_gpu_carry.sh on the build host)"; exit 1; }
work=$(mktemp -d /tmp/prewarm-gpu-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# --- environment ---------------------------------------------------------------
# Carried libraries only where this host lacks the soname: a carried copy
# must never shadow what the host's own programs (torch) load.
mkdir -p "$work/ldlib"
for lib in "$carry"/lib/*; do
  [ -e "$lib" ] || continue
  name=$(basename "$lib")
  ldconfig -p | grep -c "^[[:space:]]*$name " > /dev/null || ln -s "$lib" "$work/ldlib/$name"
done
# An ICD loader that reads OPENCL_LAYERS: the system's ocl-icd, else Debian's
# carried one (a CUDA toolkit's libOpenCL.so.1 found first loads no layer).
for system_ocl in /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 /lib/x86_64-linux-gnu/libOpenCL.so.1; do
  if [ -e "$system_ocl" ] && grep -aq OPENCL_LAYERS "$system_ocl"; then
    ln -sf "$system_ocl" "$work/ldlib/libOpenCL.so.1"
    break
  fi
done
ldconfig -p | grep -c "libxml2.so.2 " > /dev/null || note "this host has no libxml2.so.2: the carried one needs ICU 72, which the carry leaves out"
[ -e "$work/ldlib/libOpenCL.so.1" ] || ln -s "$carry/opencl/libOpenCL.so.1" "$work/ldlib/libOpenCL.so.1"
export LD_LIBRARY_PATH="$work/ldlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Containers with the NVIDIA driver mounted sometimes lack its .icd file.
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd && ldconfig -p | grep -c libnvidia-opencl.so.1 > /dev/null; then
  mkdir -p "$work/vendors"
  cp /etc/OpenCL/vendors/*.icd "$work/vendors/" 2> /dev/null || true
  echo "libnvidia-opencl.so.1" > "$work/vendors/nvidia.icd"
  export OCL_ICD_VENDORS="$work/vendors"
fi
command -v clpeak > /dev/null || { [ -x "$carry/tools/clpeak" ] && export PATH="$carry/tools:$PATH"; }
if ! command -v hashcat > /dev/null && [ -d "$carry/tools/hashcat" ] && [ "$(id -u)" = 0 ] && [ ! -e /usr/share/hashcat ]; then
  install -m 0755 "$carry/tools/hashcat/bin/hashcat" /usr/bin/hashcat
  mkdir -p /usr/share/hashcat && cp -r "$carry/tools/hashcat/share/." /usr/share/hashcat/
  tar -C /usr/share/hashcat -xJf /usr/share/hashcat/OpenCL.tar.xz && rm /usr/share/hashcat/OpenCL.tar.xz
  note "hashcat installed from the carry into /usr/bin and /usr/share/hashcat"
fi
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,pci.device_id --format=csv,noheader 2>&1
  echo "nproc: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "LD_LIBRARY_PATH carried: $(ls "$work/ldlib" | tr '\n' ' ')"
  echo "OCL_ICD_VENDORS: ${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}"
  clinfo -l 2>&1
  for p in clpeak hashcat; do echo "$p: $(command -v $p || echo absent)"; done
  /usr/bin/python3 -c "import pyopencl; print('pyopencl', pyopencl.VERSION_TEXT)" 2>&1 | tail -1
} > "$OUT/setup.txt" 2>&1
cat "$OUT/setup.txt" >&2

# --- phases: name, seconds it needs at least, bench/run arguments ------------------
phase_args() {
  case $1 in
  third-party-nvidia) echo "90|--only third_party --variants ^(clpeak|clblast|pyopencl)\snvidia$ --runs 3 --budget 60" ;;
  install-noop) echo "70|--only runtime_overhead --variants ^default\sbundle$ --runs 21 --budget 40" ;;
  third-party-pocl) echo "120|--only third_party --variants ^(clpeak|clblast)\spocl$ --runs 3 --budget 90" ;;
  hashcat-nvidia) echo "60|--only third_party --variants ^hashcat\snvidia$ --runs 3 --budget 30" ;;
  first-result) echo "90|--only first_result --variants ^(h100|h200|cpu)\sqwen2.5-0.5b\s(fp16|bf16)$ --runs 3 --budget 45" ;;
  torch-compile) echo "450|--only torch_compile --variants ^qwen2\sbf16$ --runs 1" ;; # fill, two builds, one round of five modes
  *) return 1 ;;
  esac
}
: > "$OUT/phases.md"
echo "| phase | status | seconds |" >> "$OUT/phases.md"
echo "|---|---|---|" >> "$OUT/phases.md"
for phase in $PHASES; do
  spec=$(phase_args "$phase") || { note "unknown phase $phase"; continue; }
  need=${spec%%|*}
  read -r -a args <<< "${spec#*|}"
  left=$((DEADLINE_S - ($(date +%s) - start)))
  if [ "$left" -lt "$need" ]; then
    note "$phase skipped: ${left} s left, it needs about ${need} s"
    echo "| $phase | skipped (${left} s left, needs ~${need} s) | 0 |" >> "$OUT/phases.md"
    continue
  fi
  note "$phase: bench/run ${args[*]} (${left} s left)"
  t0=$(date +%s)
  "$PYTHON" "$repo/bench/run" --build "$carry/build" --out "$OUT/$phase" "${args[@]}" 2>&1 | tee "$OUT/$phase.log" | grep -E "round|skipped|failed|error|results:" >&2
  rc=${PIPESTATUS[0]}
  echo "| $phase | exit $rc | $(( $(date +%s) - t0 )) |" >> "$OUT/phases.md"
done
note "done in $(( $(date +%s) - start )) s; results under $OUT"
cat "$OUT/phases.md" >&2
for md in "$OUT"/*/results.md; do
  [ -e "$md" ] && { echo "== $md" >&2; cat "$md" >&2; }
done
# PACK=1: everything in one archive (the device tool brings back few files).
if [ "${PACK:-0}" = 1 ]; then
  tar -C "$OUT" -czf "$work/results.tgz" . && find "$OUT" -mindepth 1 -delete && mv "$work/results.tgz" "$OUT/"
fi
