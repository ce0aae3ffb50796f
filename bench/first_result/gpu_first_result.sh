#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: time to first result of `prewarm run` per preset x
# precision in fresh processes, cold vs warm driver cache vs installed bundle.
#
# Prepare on the build host (the same carry as bench/command/gpu_torch_compile.sh):
#   ninja -C BUILD prewarm prewarm-runtime command_capture
#   bench/command/make_gpu_carry.sh BUILD          -> .carry/gpu
# Run on the GPU machine from the repository root, carrying .carry/gpu:
#   bench/first_result/gpu_first_result.sh
# Afterwards, here (plot + tables from the fetched files):
#   /usr/bin/python3 bench/first_result/run_bench.py --from-csv FETCHED/results-gpu.csv \
#     --label gpu --out FETCHED --prewarm unused
#
# Modes (each sample a fresh process with its own copy of the caches):
#   cold       empty CUDA_CACHE_PATH, no program store
#   driver     CUDA_CACHE_PATH as one earlier run with empty caches left it
#              (the warm driver cache), no store
#   installed  `prewarm build` of a one-job manifest (target h200 or h100 from
#              nvidia-smi's PCI id) -> `prewarm-runtime install` into a fresh
#              root -> `prewarm-runtime exec --root COPY -- prewarm run ...`
# The sampling loop is bench/first_result/run_bench.py (rounds interleave
# cases and modes; BUDGET_S stops starting new rounds so the whole script
# stays inside 8 minutes).
#
# Env: CASES ("model:precision ..."), RUNS (3), BUDGET_S (seconds after which
# no new sampling round starts; default 330 - setup time, at least 60: a round
# already started finishes, so the whole stays inside 8 minutes), PREFILL (16), DECODE (2), OUT ($OUT or
# ./out/gpu_first_result), PYTHON (python3), DEVICE (prewarm run --device;
# default: the first GPU).
# Dry run on a host without NVIDIA (how this script was checked before it went
# to the GPU machine): DRY_RUN=1 TARGET=cpu DEVICE=Portable
#   CACHE_VAR=POCL_CACHE_DIR BIN_DIR=<dir with prewarm and prewarm-runtime>
# Writes OUT/results-gpu.{md,csv,json}, first-result-gpu.png (if matplotlib),
# OUT/setup.txt, OUT/logs/.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
started=$(date +%s)
CASES=${CASES:-"qwen2.5-0.5b:fp32 qwen2.5-0.5b:fp16 qwen2.5-0.5b:int8 lprnet:fp32 lprnet:int8 gptq-linear:fp16"}
RUNS=${RUNS:-3}
BUDGET_S=${BUDGET_S:-}
PREFILL=${PREFILL:-16}
DECODE=${DECODE:-2}
PYTHON=${PYTHON:-python3}
DEVICE=${DEVICE:-}
CACHE_VAR=${CACHE_VAR:-CUDA_CACHE_PATH}
OUT=${OUT:-$repo/out/gpu_first_result}
carry="$repo/.carry/gpu"
BIN_DIR=${BIN_DIR:-$carry/bin}
mkdir -p "$OUT/logs"
work=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-first-result.XXXXXX")
trap 'rm -rf "$work"' EXIT

die() { echo "gpu_first_result: $*" | tee -a "$OUT/setup.txt" >&2; exit 1; }
note() { echo "== $*" | tee -a "$OUT/setup.txt" >&2; }
secs() { "$PYTHON" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$1" "$2"; }

if [ -z "${DRY_RUN:-}" ]; then
  command -v nvidia-smi > /dev/null || die "no nvidia-smi: run this on the GPU machine (or DRY_RUN=1)"
fi
[ -x "$BIN_DIR/prewarm" ] && [ -x "$BIN_DIR/prewarm-runtime" ] ||
  die "$BIN_DIR/prewarm or prewarm-runtime missing: run bench/command/make_gpu_carry.sh BUILD on the build host and carry .carry/gpu"

# --- environment: the same rules as bench/command/gpu_torch_compile.sh -------
# Carried libraries only where this host lacks the soname; the NVIDIA ICD
# registered through OCL_ICD_VENDORS when /etc/OpenCL/vendors lacks it.
mkdir -p "$work/ldlib"
if [ -d "$carry/lib" ]; then
  for lib in "$carry"/lib/*; do
    [ -e "$lib" ] || continue
    name=$(basename "$lib")
    ldconfig -p | grep -q "^[[:space:]]*$name " || ln -s "$lib" "$work/ldlib/$name"
  done
  if ! ldconfig -p | grep -q "libOpenCL.so.1 " && [ -e "$carry/opencl/libOpenCL.so.1" ]; then
    ln -s "$carry/opencl/libOpenCL.so.1" "$work/ldlib/libOpenCL.so.1"
  fi
fi
if [ -z "${DRY_RUN:-}" ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null; then
  mkdir -p "$work/vendors"
  echo "libnvidia-opencl.so.1" > "$work/vendors/nvidia.icd"
  export OCL_ICD_VENDORS="$work/vendors"
fi
export LD_LIBRARY_PATH="$work/ldlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pw() { "$BIN_DIR/prewarm" "$@"; }
pwr() { "$BIN_DIR/prewarm-runtime" "$@"; }

# One registry target for this GPU (h100 and h200 share SM 90: naming both
# would run every job twice on the same device).
pci=$(nvidia-smi --query-gpu=pci.device_id --format=csv,noheader 2>/dev/null | head -1 | tr 'A-F' 'a-f')
case "$pci" in
  0x2335*) target=h200 ;;
  *) target=h100 ;;
esac
target=${TARGET:-$target}
{
  echo "date: $(date -u +%FT%TZ)"
  echo "target: $target (pci.device_id ${pci:-none})"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,pci.device_id --format=csv 2>/dev/null
  echo "OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-}"
  echo "carried libraries used: $(ls "$work/ldlib" | tr '\n' ' ')"
  nproc
} >> "$OUT/setup.txt" 2>&1
cat "$OUT/setup.txt" >&2

pw keygen --out "$work/test_only_first_result" > "$OUT/logs/keygen.out" 2>&1 ||
  die "prewarm keygen failed: $(tail -3 "$OUT/logs/keygen.out")"

# --- installed roots: one bundle per case ------------------------------------
# One manifest per case (its own shapes = what `prewarm run` runs below), so a
# case's bundle holds exactly its programs; each is installed into its own root.
roots="{"
sep=""
cases_arg=""
for spec in $CASES; do
  model=${spec%%:*}
  precision=${spec#*:}
  tag="$model-$precision"
  cat > "$work/$tag.yaml" <<YAML
version: 1
models:
  - name: $model
    preset: $model
precisions: [$precision]
shapes:
  batch_sizes: [1]
  prefill_lengths: [$PREFILL]
  decode_steps: $DECODE
targets: [$target]
bundle:
  channel: bench/first-result
  expires: 7d
YAML
  t0=$(date +%s.%N)
  if ! pw build "$work/$tag.yaml" --key "$work/test_only_first_result.key" --out "$work/bundle-$tag" \
      --json "$OUT/logs/build-$tag.json" > "$OUT/logs/build-$tag.out" 2> "$OUT/logs/build-$tag.err"; then
    note "prewarm build $tag failed (case left out): $(tail -5 "$OUT/logs/build-$tag.err")"
    continue
  fi
  t1=$(date +%s.%N)
  if ! pwr install "$work/bundle-$tag" --trust "$work/test_only_first_result.pub" --root "$work/root-$tag" \
      --json > "$OUT/logs/install-$tag.json" 2> "$OUT/logs/install-$tag.err"; then
    note "prewarm-runtime install $tag failed (case left out): $(tail -5 "$OUT/logs/install-$tag.err")"
    continue
  fi
  t2=$(date +%s.%N)
  note "$tag: build $(secs "$t0" "$t1") s, install $(secs "$t1" "$t2") s, $(find "$work/root-$tag" -type f | wc -l) files installed"
  pwr status --root "$work/root-$tag" > "$OUT/logs/status-$tag.txt" 2>&1
  roots+="$sep\"$model $precision\": \"$work/root-$tag\""
  sep=", "
  cases_arg+="${cases_arg:+,}$model:$precision"
done
roots+="}"
echo "$roots" > "$work/roots.json"
[ -n "$cases_arg" ] || die "no case could be built and installed (see $OUT/logs)"
setup_s=$(( $(date +%s) - started ))
if [ -z "$BUDGET_S" ]; then
  BUDGET_S=$(( 330 - setup_s ))
  [ "$BUDGET_S" -ge 60 ] || BUDGET_S=60
fi
note "setup (builds + installs) took ${setup_s} s; sampling budget ${BUDGET_S} s"

# --- samples -----------------------------------------------------------------
device_args=()
[ -n "$DEVICE" ] && device_args=(--device "$DEVICE")
"$PYTHON" "$repo/bench/first_result/run_bench.py" --prewarm "$BIN_DIR/prewarm" --runtime "$BIN_DIR/prewarm-runtime" \
  --installed-roots "$work/roots.json" --cache-var "$CACHE_VAR" --cases "$cases_arg" --runs "$RUNS" \
  --budget "$BUDGET_S" --prefill "$PREFILL" --decode "$DECODE" "${device_args[@]}" --label gpu --out "$OUT" \
  > "$OUT/logs/run_bench.out" 2> "$OUT/logs/run_bench.err"
rc=$?
tail -n +1 "$OUT/logs/run_bench.err" >&2
[ $rc -eq 0 ] || die "run_bench.py failed ($rc): $(tail -5 "$OUT/logs/run_bench.err")"
cat "$OUT/results-gpu.md"
note "total $(( $(date +%s) - started )) s"
