# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU scripts (gpu_hit_proof.sh, gpu_capture_root.sh): the
# carried prewarm binaries (bench/command/make_gpu_carry.sh) made runnable on
# the GPU machine. Needs: carry (.carry/gpu), work (a scratch directory),
# ORIG_LD_LIBRARY_PATH, PYTHON and die(). Defines: pw and pwr (prewarm and
# prewarm-runtime with the carried libraries), target (h100 or h200 by PCI
# id; TARGET overrides), now and elapsed (seconds since a `now`).

[ -x "$carry/bin/prewarm" ] || die "$carry/bin/prewarm missing: run bench/command/make_gpu_carry.sh on the build host and carry .carry/gpu"

# Carried libraries only where this host lacks the soname (as gpu_torch_compile.sh).
mkdir -p "$work/ldlib"
for lib in "$carry"/lib/*; do
  [ -e "$lib" ] || continue
  name=$(basename "$lib")
  ldconfig -p | grep -q "^[[:space:]]*$name " || ln -s "$lib" "$work/ldlib/$name"
done
ldconfig -p | grep -q "libOpenCL.so.1 " || ln -s "$carry/opencl/libOpenCL.so.1" "$work/ldlib/libOpenCL.so.1"
PW_LD="$work/ldlib${ORIG_LD_LIBRARY_PATH:+:$ORIG_LD_LIBRARY_PATH}"
pw() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/prewarm" "$@"; }
pwr() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/prewarm-runtime" "$@"; }

pci=$(nvidia-smi --query-gpu=pci.device_id --format=csv,noheader 2>/dev/null | head -1 | tr 'A-F' 'a-f')
case "$pci" in 0x2335*) target=h200 ;; *) target=h100 ;; esac
target=${TARGET:-$target}

now() { date +%s.%N; }
elapsed() { "$PYTHON" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$1" "$(now)"; }
