#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: where the first compiled call's time goes when Dynamo's
# precompiled frames load from a prewarm bundle (kinds triton, dynamo, cuda),
# against a warm cache in place and an eager first forward (what any process
# pays: CUDA context, cuBLAS). One fill, one build, then single runs with
# bench/command/qwen2_compile_warmup.py --diag (cProfile of the imports and of
# the first compiled call, Dynamo's phase times, the counters) and plain timed
# runs under variables that may matter (VARIANTS). Not a benchmark: the
# figures are single processes; gpu_torch_dynamo.sh takes the medians.
# Prepare on the build host: bench/command/make_gpu_carry.sh BUILD_DIR; carry .carry/gpu.
# Env: PRECISION (bf16), ARCH (qwen2), MODEL_ARGS, OUT, PYTHON, KINDS ("triton, dynamo, cuda"),
#      VARIANTS ("NAME:VAR=VALUE,VAR=VALUE ..." run through the bundle),
#      BUDGET (s: no variant or Mega-Cache run starts after it),
#      ANYPATH=1 (build without --capture-root, install at another root),
#      QUICK=1 (only the fill, the build and the bundle runs: no imports, warm,
#      eager or Mega-Cache runs), LAZY=DIR (one more diag run and one plain
#      run with DIR on PYTHONPATH: bench/command/lazy_frames).
# Writes OUT/diag.log (one JSON line a run), OUT/diag.tar.gz (profiles), OUT/env.txt.
set -uo pipefail
PRECISION=${PRECISION:-bf16}
ARCH=${ARCH:-qwen2}
KINDS=${KINDS:-"triton, dynamo, cuda"}
PYTHON=${PYTHON:-python3}
VARIANTS=${VARIANTS:-"threads1:TORCHINDUCTOR_COMPILE_THREADS=1"}
read -r -a MODEL <<< "${MODEL_ARGS:---layers 24 --hidden 896 --heads 14 --kv-heads 2 --vocab 151936 --prompt 64 --decode 1}"
repo=$(cd "$(dirname "$0")/../.." && pwd)
carry="$repo/.carry/gpu"
SCRIPT="$repo/bench/command/qwen2_compile_warmup.py"
OUT=${OUT:-$repo/out/gpu_torch_frames_diag}
mkdir -p "$OUT"
work=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-gpu-diag.XXXXXX")
trap 'rm -rf "$work"' EXIT
die() { echo "gpu_torch_frames_diag: $*" >&2; exit 1; }
ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
# shellcheck source=bench/command/gpu_carry.sh
. "$repo/bench/command/gpu_carry.sh"
log="$OUT/diag.log"; : > "$log"
note() { echo "== $*" | tee -a "$log" >&2; }
run() { # NAME then a command that prints the warm-up's JSON line
  local name=$1; shift
  local t; t=$(now)
  if "$@" > "$work/$name.json" 2> "$work/$name.err"; then
    echo "{\"run\": \"$name\", \"wall_s\": $(elapsed "$t"), \"result\": $(tail -1 "$work/$name.json")}" | tee -a "$log"
  else note "$name failed: $(tail -5 "$work/$name.err")"; fi
}
fresh() { mkdir -p "$1/inductor" "$1/triton" "$1/cuda"
  echo "TORCHINDUCTOR_CACHE_DIR=$1/inductor TRITON_CACHE_DIR=$1/triton CUDA_CACHE_PATH=$1/cuda CUDA_CACHE_MAXSIZE=4294967296"; }
ARGS=("${MODEL[@]}" --arch "$ARCH" --precision "$PRECISION")

{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  "$PYTHON" -c 'import sys, os, sysconfig, torch; print("python", sys.version.split()[0], sys.executable, "torch", torch.__version__, torch.__file__);
print("dont_write_bytecode", sys.flags.dont_write_bytecode, "pycache_prefix", sys.pycache_prefix, "purelib writable", os.access(sysconfig.get_paths()["purelib"], os.W_OK))'
  ls -d "$("$PYTHON" -c 'import os, torch; print(os.path.dirname(torch.__file__))')"/__pycache__ 2>&1
  env | grep -E '^(PYTHON|TORCH|TRITON|CUDA|OMP)' ; nproc; echo "target $target; ${ARGS[*]}"; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt" >&2

# Imports alone: what every Python process of this image pays before any compile.
imports='import time; t=time.perf_counter(); import torch, transformers; from transformers import Qwen2ForCausalLM; import torch._dynamo, torch._inductor.codecache; print("{\"import_s\": %.3f}" % (time.perf_counter()-t))'
if [ -z "${QUICK:-}" ]; then
  run imports-1 "$PYTHON" -c "$imports"
  run imports-2 "$PYTHON" -c "$imports"
  run imports-pycache-prefix-1 env PYTHONPYCACHEPREFIX="$work/pyc" "$PYTHON" -c "$imports"
  run imports-pycache-prefix-2 env PYTHONPYCACHEPREFIX="$work/pyc" "$PYTHON" -c "$imports"
fi

# The fill's timings are not read: with QUICK it runs beside the build.
# shellcheck disable=SC2046
fill() { run fill env $(fresh "$work/fill") "$PYTHON" "$SCRIPT" "${ARGS[@]}" --save-megacache "$work/mega.bin"; }
if [ -n "${QUICK:-}" ]; then fill & else fill; fi
root="$work/root"
cat > "$work/dynamo.yaml" <<YAML
version: 1
models:
  - name: $ARCH
    command:
      argv: [$PYTHON, $SCRIPT, $(printf '"%s", ' "${MODEL[@]}")--arch, $ARCH, --precision, "{precision}"]
      timeout: 30m
      kinds: [$KINDS]
precisions: [$PRECISION]
targets: [$target]
YAML
pw keygen --out "$work/test_only_gpu" > /dev/null 2>&1 || die "keygen failed"
export PREWARM_PYTHON="$PYTHON"
t=$(now)
capture_root=(--capture-root "$root")
[ -n "${ANYPATH:-}" ] && capture_root=()
pw build "$work/dynamo.yaml" --key "$work/test_only_gpu.key" --out "$work/dynamo.bundle" "${capture_root[@]}" \
  > /dev/null 2> "$work/build.err" || die "build failed: $(tail -5 "$work/build.err")"
note "build: $(elapsed "$t") s; $(grep -o 'hit proof: [^;]*' "$work/build.err" | tr '\n' ' ')"
wait
pwr install "$work/dynamo.bundle" --trust "$work/test_only_gpu.pub" --root "$root" > /dev/null 2> "$work/install.err" \
  || die "install failed: $(tail -3 "$work/install.err")"
cp -a "$root" "$work/pristine"
bundle_run() { local name=$1; shift; run "$name" bundle "$name" "$@"; }
# A fresh copy of the installed root each time; the first argument names the audit.
bundle() { local name=$1; shift; rm -rf "$root"; cp -a "$work/pristine" "$root"
  pwr exec --root "$root" --audit "$work/$name.audit.json" -- "$@"; }

bundle_run dynamo-diag "$PYTHON" "$SCRIPT" "${ARGS[@]}" --diag "$OUT/diag-dynamo"
# The same bundle, an application that runs one graph (--decode 0) of those loaded.
[ -z "${QUICK:-}" ] && bundle_run dynamo-diag-1graph "$PYTHON" "$SCRIPT" "${ARGS[@]}" --decode 0 --diag "$OUT/diag-dynamo-1graph"
if [ -n "${LAZY:-}" ]; then
  mkdir -p "$OUT/diag-lazy"
  bundle_run lazy-diag env PYTHONPATH="$LAZY" "$PYTHON" "$SCRIPT" "${ARGS[@]}" --diag "$OUT/diag-lazy"
fi
warm() { rm -rf "$work/warm"; cp -a "$work/fill" "$work/warm"; }
if [ -z "${QUICK:-}" ]; then
  warm
  # shellcheck disable=SC2046
  run warm-diag env $(fresh "$work/warm") "$PYTHON" "$SCRIPT" "${ARGS[@]}" --diag "$OUT/diag-warm"
  run eager "$PYTHON" "$SCRIPT" "${ARGS[@]}" --eager-only
fi
for round in $(seq "${ROUNDS:-1}"); do
  bundle_run "dynamo-$round" "$PYTHON" "$SCRIPT" "${ARGS[@]}"
  [ -n "${LAZY:-}" ] && bundle_run "lazy-$round" env PYTHONPATH="$LAZY" "$PYTHON" "$SCRIPT" "${ARGS[@]}"
  warm
  # shellcheck disable=SC2046
  run "warm-$round" env $(fresh "$work/warm") "$PYTHON" "$SCRIPT" "${ARGS[@]}"
done
for v in $VARIANTS; do
  [ "$SECONDS" -lt "${BUDGET:-100000}" ] || { note "budget spent: $v not run"; continue; }
  name=${v%%:*}; vars=${v#*:}
  # shellcheck disable=SC2046
  bundle_run "dynamo-$name" env $(echo "$vars" | tr ',' ' ') "$PYTHON" "$SCRIPT" "${ARGS[@]}"
done
# shellcheck disable=SC2046
[ -z "${QUICK:-}" ] && [ "$SECONDS" -lt "${BUDGET:-100000}" ] && run megacache-diag env $(fresh "$work/mega") "$PYTHON" "$SCRIPT" "${ARGS[@]}" --load-megacache "$work/mega.bin" --diag "$OUT/diag-mega"

( cd "$work" && tar czf "$OUT/diag.tar.gz" ./*.err ./*.audit.json dynamo.yaml 2>/dev/null )
# Top of each profile, sorted by cumulative and own time, into the log's tail.
for d in "$OUT"/diag-*/; do
  for prof in "$d"/*.prof; do
    [ -e "$prof" ] || continue
    "$PYTHON" - "$prof" > "$prof.txt" 2>&1 <<'PY'
import pstats, sys
s = pstats.Stats(sys.argv[1])
s.sort_stats("cumulative").print_stats(45)
s.sort_stats("tottime").print_stats(30)
PY
  done
done
( cd "$OUT" && tar czf profiles.tar.gz diag-*/ && rm -rf diag-*/ )
note "done"
tar xzOf "$OUT/profiles.tar.gz" --wildcards '*/phases.txt'  2>/dev/null | head -80
