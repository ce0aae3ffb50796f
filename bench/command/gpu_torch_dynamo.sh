#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: transformers models (bench/command/qwen2_compile_warmup.py,
# random weights from a config) first compiled call and first token from
# process start, by cache state, with prewarm's dynamo kind (Inductor's cache
# plus Dynamo's precompiled frames: no tracing in a fresh process) beside the
# inductor kind:
#   cold       empty TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR, CUDA_CACHE_PATH
#   warm       the directories one earlier run filled (warm in place)
#   megacache  empty directories + load_cache_artifacts() of the saved blob
#   inductor   prewarm build (triton, inductor, cuda; --capture-root) ->
#              install -> exec, on a fresh copy of the root at the same path
#   dynamo     the same with kinds triton, dynamo, cuda
#   dynpyc     the same with kinds triton, dynamo, cuda, pycache (Python's
#              bytecode too: the image compiles every module it imports)
#   anypath    kinds triton, dynamo, cuda, pycache built WITHOUT --capture-root
#              (the capture in the build's work directory), installed at
#              another root: what a user gets with no flag
#   eager      no torch.compile: the first eager forward (CUDA context, cuBLAS:
#              what any process pays), once per configuration
# Modes interleaved round by round; every run checks compiled vs eager.
# Prepare on the build host: bench/command/make_gpu_carry.sh BUILD_DIR; carry .carry/gpu.
# Env: RUNS (3), CONFIGS ("qwen2:bf16": ARCH:PRECISION ...), MODES ("cold warm megacache inductor dynamo"),
#      COLD_RUNS (RUNS - 1: the fill is a cold sample too), BUDGET (s: no round starts after it),
#      MODEL_ARGS (default by ARCH; qwen2: Qwen2.5-0.5B's dimensions), OUT (./out/gpu_torch_dynamo), PYTHON,
#      PYCACHE (1: the rounds again with Python's bytecode cached, modes recorded as MODE+pyc),
#      STAGE (all; prepare: the fill, builds and eager baseline only; rounds: only the rounds, on the
#      WORK a prepare left), WORK (a scratch directory kept after the script; default: a temporary one),
#      DIAG (1: builds and rounds load bench/command/torch_cache_diag: what the caches were asked for,
#      into OUT/logs/diag-*.jsonl; not for figures).
# Appends to OUT/samples.jsonl; writes OUT/summary.md (all samples there), OUT/env.txt, OUT/logs/.
set -uo pipefail
RUNS=${RUNS:-3}
CONFIGS=${CONFIGS:-qwen2:bf16}
MODES=${MODES:-"cold warm megacache inductor dynamo"}
COLD_RUNS=${COLD_RUNS:-$((RUNS - 1))}
BUDGET=${BUDGET:-100000}
PYTHON=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
carry="$repo/.carry/gpu"
SCRIPT="$repo/bench/command/qwen2_compile_warmup.py"
OUT=${OUT:-$repo/out/gpu_torch_dynamo}
mkdir -p "$OUT/logs"
STAGE=${STAGE:-all}
if [ -n "${WORK:-}" ]; then work=$WORK; mkdir -p "$work"
else work=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-gpu-dynamo.XXXXXX"); trap 'rm -rf "$work"' EXIT; fi
diag_env=()
if [ "${DIAG:-0}" = 1 ]; then
  diag_env=(env "PYTHONPATH=$repo/bench/command/torch_cache_diag" "PREWARM_DIAG_LOG=$OUT/logs/diag-rounds.jsonl" PREWARM_DIAG_OPENS=1)
fi
samples="$OUT/samples.jsonl"; touch "$samples"
note() { echo "== $*" | tee -a "$OUT/summary.log" >&2; }
die() { note "$*"; exit 1; }
ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
bundle_modes=0
for m in $MODES; do case $m in inductor|dynamo|dynpyc|anypath) bundle_modes=1 ;; esac; done
if [ "$bundle_modes" = 1 ]; then
  # shellcheck source=bench/command/gpu_carry.sh
  . "$repo/bench/command/gpu_carry.sh"
else # PyTorch's own modes only: no prewarm binaries needed
  target=none
  now() { date +%s.%N; }
  elapsed() { "$PYTHON" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$1" "$(now)"; }
fi
model_args() { # ARCH: MODEL_ARGS, else that architecture's default dimensions
  if [ -n "${MODEL_ARGS:-}" ]; then echo "$MODEL_ARGS"; return; fi
  case $1 in
    qwen2) echo "--layers 24 --hidden 896 --heads 14 --kv-heads 2 --vocab 151936 --prompt 64 --decode 1" ;;
    llama) echo "--layers 16 --hidden 1024 --heads 16 --kv-heads 4 --vocab 32000 --prompt 64 --decode 1" ;;
    gpt2) echo "--layers 24 --hidden 1024 --heads 16 --vocab 50257 --prompt 64 --decode 1" ;;
  esac
}
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  "$PYTHON" -c 'import torch, transformers, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__)'
  echo "target $target; runs $RUNS (cold $((COLD_RUNS + 1))); modes $MODES"
  for c in $CONFIGS; do echo "${c}: $(model_args "${c%%:*}")"; done; } >> "$OUT/env.txt" 2>&1
tail -4 "$OUT/env.txt" >&2
[ "$bundle_modes" = 0 ] || [ -e "$work/test_only_gpu.key" ] || pw keygen --out "$work/test_only_gpu" > /dev/null 2>&1 || die "keygen failed"
export PREWARM_PYTHON="$PYTHON"
fresh() { mkdir -p "$1/inductor" "$1/triton" "$1/cuda"
  echo "TORCHINDUCTOR_CACHE_DIR=$1/inductor TRITON_CACHE_DIR=$1/triton CUDA_CACHE_PATH=$1/cuda CUDA_CACHE_MAXSIZE=4294967296"; }
record() { # MODE ROUND JSONFILE WALL
  "$PYTHON" -c 'import json,sys; r=json.loads(open(sys.argv[3]).read().strip().splitlines()[-1]); r.update(mode=sys.argv[1], round=int(sys.argv[2]), wall_s=float(sys.argv[4]), arch=sys.argv[5], precision=sys.argv[6]); print(json.dumps(r))' \
    "$@" "$arch" "$p" >> "$samples"
}
build_kind() { # KIND: prewarm build (a capture root), install, and a pristine copy of the installed root
  local kind=$1 root="$work/root-$1-$arch-$p" t kinds
  local capture=(--capture-root "$root")
  case $kind in dynpyc|anypath) kinds="triton, dynamo, cuda, pycache" ;; *) kinds="triton, $kind, cuda" ;; esac
  [ "$kind" = anypath ] && capture=()
  local envs=""
  [ "${DIAG:-0}" = 1 ] && envs="      env: {PYTHONPATH: \"$repo/bench/command/torch_cache_diag\", PREWARM_DIAG_LOG: \"$OUT/logs/diag-build-$kind-$arch-$p.jsonl\", PREWARM_DIAG_OPENS: \"1\"}"
  cat > "$work/$kind-$arch-$p.yaml" <<YAML
version: 1
models:
  - name: $arch
    command:
      argv: [$PYTHON, $SCRIPT, $(printf '"%s", ' "${MODEL[@]}")--precision, "{precision}"]
      timeout: 30m
      kinds: [$kinds]
$envs
precisions: [$p]
targets: [$target]
YAML
  t=$(now)
  pw build "$work/$kind-$arch-$p.yaml" --key "$work/test_only_gpu.key" --out "$work/$kind-$arch-$p.bundle" "${capture[@]}" \
    --json "$OUT/logs/build-$kind-$arch-$p.json" \
    > /dev/null 2> "$OUT/logs/build-$kind-$arch-$p.err" || { note "build $kind $arch $p failed: $(tail -5 "$OUT/logs/build-$kind-$arch-$p.err")"; return; }
  note "build $kind $arch $p: $(elapsed "$t") s; $(grep -o 'hit proof: [^;]*\|a Dynamo frame recorded.*' "$OUT/logs/build-$kind-$arch-$p.err" | sort -u | tr '\n' ' ')"
  pwr install "$work/$kind-$arch-$p.bundle" --trust "$work/test_only_gpu.pub" --root "$root" > /dev/null 2> "$OUT/logs/install-$kind-$arch-$p.err" \
    || note "install $kind $arch $p failed: $(tail -3 "$OUT/logs/install-$kind-$arch-$p.err")"
  cp -a "$root" "$work/pristine-$kind-$arch-$p"
}

rounds() { # SUFFIX [COMMAND PREFIX...]: RUNS rounds of MODES, recorded as MODE+SUFFIX
  local suffix=$1 i mode log t rc root; shift
  for i in $(seq 1 "$RUNS"); do
    if [ "$SECONDS" -gt "$BUDGET" ]; then note "budget of $BUDGET s spent: $arch $p$suffix $((i - 1)) rounds"; break; fi
    for mode in $MODES; do
      if [ "$mode" = cold ] && [ "$i" -gt "$COLD_RUNS" ]; then continue; fi
      log="$OUT/logs/$mode$suffix-$arch-$p-$i"; t=$(now); rc=0
      # shellcheck disable=SC2046
      case $mode in
        cold) rm -rf "$work/cold"; "$@" env $(fresh "$work/cold") "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" > "$log.json" 2> "$log.err" || rc=$? ;;
        warm) rm -rf "$work/warm"; cp -a "$work/fill-$arch-$p" "$work/warm"
              "$@" env $(fresh "$work/warm") "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" > "$log.json" 2> "$log.err" || rc=$? ;;
        megacache) rm -rf "$work/mega"; "$@" env $(fresh "$work/mega") "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" \
                     --load-megacache "$work/mega-$arch-$p.bin" > "$log.json" 2> "$log.err" || rc=$? ;;
        inductor|dynamo|dynpyc|anypath) root="$work/root-$mode-$arch-$p"; rm -rf "$root"; cp -a "$work/pristine-$mode-$arch-$p" "$root" || continue
              pwr exec --root "$root" --audit "$log.audit.json" -- "$@" "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" \
                > "$log.json" 2> "$log.err" || rc=$? ;;
      esac
      if [ "$rc" -eq 0 ]; then record "$mode$suffix" "$i" "$log.json" "$(elapsed "$t")"
      else note "$mode $arch $p $suffix round $i failed: $(tail -3 "$log.err")"; fi
    done
  done
}

for config in $CONFIGS; do
  arch=${config%%:*}; p=${config#*:}
  read -r -a MODEL <<< "$(model_args "$arch") --arch $arch"
  if [ "$STAGE" = rounds ]; then
    rounds "" "${diag_env[@]}"
    continue
  fi
  # The fill is a cold run too: recorded as cold round 0 (saving the Mega-Cache comes after its timings).
  # With STAGE=prepare it runs beside the builds (its time is then no figure).
  fill() {
    local t log="$OUT/logs/fill-$arch-$p"; t=$(now)
    # shellcheck disable=SC2046
    if env $(fresh "$work/fill-$arch-$p") "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" --save-megacache "$work/mega-$arch-$p.bin" \
         > "$log.json" 2> "$log.err"; then
      record cold 0 "$log.json" "$(elapsed "$t")"
    else note "fill $arch $p failed: $(tail -3 "$log.err")"; return 1; fi
  }
  needs_fill=0
  for m in $MODES; do case $m in cold|warm|megacache) needs_fill=1 ;; esac; done
  if [ "$needs_fill" = 0 ]; then :; elif [ "$STAGE" = prepare ]; then fill & else fill || continue; fi
  # The builds run side by side (their times are not figures), then the eager baseline alone.
  for kind in inductor dynamo dynpyc anypath; do
    case " $MODES " in *" $kind "*) build_kind "$kind" & ;; esac
  done
  wait
  t=$(now); log="$OUT/logs/eager-$arch-$p"
  if "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" --eager-only > "$log.json" 2> "$log.err"; then
    record eager 1 "$log.json" "$(elapsed "$t")"
  else note "eager $arch $p failed: $(tail -3 "$log.err")"; fi
  [ "$STAGE" = prepare ] && continue
  rounds "" "${diag_env[@]}"
  if [ "${PYCACHE:-0}" = 1 ]; then
    # Every mode again with Python's bytecode cached: this image sets
    # PYTHONDONTWRITEBYTECODE=1 and ships no __pycache__, so each process
    # compiles every module it imports. One process fills the cache first.
    pyc="$work/pycache-$arch-$p"
    env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX="$pyc" "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$p" --eager-only > /dev/null 2>&1
    rounds "+pyc" env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX="$pyc"
  fi
done
"$PYTHON" "$repo/bench/command/summarize_gpu_torch.py" "$samples" > "$OUT/summary.md"
cat "$OUT/summary.md"
