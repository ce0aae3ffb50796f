# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the GPU scripts (gpu_hit_proof.sh, gpu_capture_root.sh,
# gpu_app_proof.sh, gpu_torch_dynamo.sh, gpu_torch_frames_diag.sh): the
# carried prewarm binaries (bench/command/make_gpu_carry.sh) made runnable on
# the GPU machine. Needs: repo, and either gpu_bench (below) or carry
# (.carry/gpu), work (a scratch directory), ORIG_LD_LIBRARY_PATH, PYTHON and
# die(). Defines: pw and pwr (prewarm and prewarm-runtime with the carried
# libraries), target (h100 or h200 by PCI id; TARGET overrides), now and
# elapsed (seconds since a `now`).
#
# With gpu_bench set to the script's name (gpu_hit_proof, ...), the preamble
# those scripts share comes first: carry, OUT (default out/<gpu_bench>) and
# OUT/logs, work (removed at exit), an empty OUT/samples.jsonl in samples,
# ORIG_LD_LIBRARY_PATH, note() and die() (into OUT/summary.log), and the
# check for nvidia-smi (skipped when gpu_bench_dry_run is non-empty); and
# gpu_bench_env FUNCTION writes OUT/env.txt (date, target, the GPU, then what
# FUNCTION prints), shows it and makes the build key.

if [ -n "${gpu_bench:-}" ]; then
  carry="$repo/.carry/gpu"
  OUT=${OUT:-$repo/out/$gpu_bench}
  mkdir -p "$OUT/logs"
  work=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-${gpu_bench//_/-}.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  samples="$OUT/samples.jsonl"
  : > "$samples"
  ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}

  note() { echo "== $*" | tee -a "$OUT/summary.log" >&2; }
  die() { echo "$gpu_bench: $*" | tee -a "$OUT/summary.log" >&2; exit 1; }

  [ -n "${gpu_bench_dry_run:-}" ] || command -v nvidia-smi > /dev/null || die "no nvidia-smi: run this on the GPU machine"

  gpu_bench_env() {
    {
      echo "date: $(date -u +%FT%TZ)"
      echo "target: $target (pci.device_id $pci)"
      nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
      "$1"
    } > "$OUT/env.txt" 2>&1
    cat "$OUT/env.txt" >&2
    pw keygen --out "$work/test_only_gpu" > /dev/null 2>&1 || die "prewarm keygen failed"
  }
fi

[ -x "$carry/bin/prewarm" ] || die "$carry/bin/prewarm missing: run bench/command/make_gpu_carry.sh on the build host and carry .carry/gpu"

# Carried libraries only where this host lacks the soname (as gpu_torch_compile.sh).
mkdir -p "$work/ldlib"
for lib in "$carry"/lib/*; do
  [ -e "$lib" ] || continue
  name=$(basename "$lib")
  ldconfig -p | grep -c "^[[:space:]]*$name " > /dev/null || ln -s "$lib" "$work/ldlib/$name"
done
ldconfig -p | grep -c "libOpenCL.so.1 " > /dev/null || ln -s "$carry/opencl/libOpenCL.so.1" "$work/ldlib/libOpenCL.so.1"
PW_LD="$work/ldlib${ORIG_LD_LIBRARY_PATH:+:$ORIG_LD_LIBRARY_PATH}"
pw() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/prewarm" "$@"; }
pwr() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/prewarm-runtime" "$@"; }

pci=$(nvidia-smi --query-gpu=pci.device_id --format=csv,noheader 2>/dev/null | head -1 | tr 'A-F' 'a-f')
case "$pci" in 0x2335*) target=h200 ;; *) target=h100 ;; esac
target=${TARGET:-$target}

now() { date +%s.%N; }
elapsed() { "$PYTHON" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$1" "$(now)"; }
