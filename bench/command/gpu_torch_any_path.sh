#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: does a torch.compile bundle built WITHOUT --capture-root
# hit where it is installed (another path)? For each variant, `prewarm build`
# (verify: warn) of the Qwen2 warm-up (bench/command/qwen2_compile_warmup.py,
# random weights, small dimensions), then install at another root, one
# `prewarm-runtime exec --audit` there, and:
#   - the build's hit-proof line and its verdict;
#   - which installed files still carry the build's capture path (a binary
#     grep for "/capture/staging/"), per kind, with the first match's context;
#   - whether the run recreated the build's capture path (the application
#     writing at the build machine's path: Inductor's autotune .best_config).
# Variants (VARIANTS): dyn (triton, dynamo, cuda, pycache), dyn-nostatic (the
# same with TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER=0 at build and run),
# ind (triton, inductor, cuda), ind-nostatic.
# Prepare on the build host: bench/command/make_gpu_carry.sh BUILD_DIR; carry .carry/gpu.
# Env: PRECISION (bf16), MODEL_ARGS (small), PYTHON (python3), OUT (./out/gpu_torch_any_path).
set -uo pipefail
PRECISION=${PRECISION:-bf16}
PYTHON=${PYTHON:-python3}
VARIANTS=${VARIANTS:-"dyn dyn-nostatic ind ind-nostatic"}
MODEL_ARGS=${MODEL_ARGS:-"--layers 2 --hidden 256 --heads 4 --kv-heads 2 --vocab 4096 --prompt 32 --decode 2"}
repo=$(cd "$(dirname "$0")/../.." && pwd)
SCRIPT=$repo/bench/command/qwen2_compile_warmup.py
gpu_bench=gpu_torch_any_path
# shellcheck source=bench/command/gpu_carry.sh
source "$repo/bench/command/gpu_carry.sh"
versions() { "$PYTHON" -c 'import torch, triton, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'; }
gpu_bench_env versions
export PREWARM_PYTHON="$PYTHON"
read -r -a MODEL <<< "$MODEL_ARGS"

build_variant() { # VARIANT
  local v=$1 kinds envs="" runtime_env=""
  case $v in dyn*) kinds="triton, dynamo, cuda, pycache" ;; ind*) kinds="triton, inductor, cuda" ;; esac
  case $v in *-nostatic)
    envs='      env: {TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER: "0"}'
    runtime_env='      runtime_env: {TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER: "0"}' ;; esac
  cat > "$work/$v.yaml" <<YAML
version: 1
models:
  - name: qwen2
    command:
      argv: [$PYTHON, $SCRIPT, $(printf '"%s", ' "${MODEL[@]}")--precision, "{precision}"]
      timeout: 20m
      kinds: [$kinds]
      verify: warn
$envs
$runtime_env
precisions: [$PRECISION]
targets: [$target]
YAML
  local t; t=$(now)
  pw -v build "$work/$v.yaml" --key "$work/test_only_gpu.key" --out "$work/$v.bundle" \
    > "$OUT/logs/build-$v.out" 2> "$OUT/logs/build-$v.err"
  note "build $v: rc $? in $(elapsed "$t") s; $(grep -o 'hit proof[^\n]*' "$OUT/logs/build-$v.err" | head -3 | tr '\n' ' ')"
}

for v in $VARIANTS; do build_variant "$v" & done
wait
for v in $VARIANTS; do
  [ -e "$work/$v.bundle" ] || continue
  root="$work/elsewhere-$v/root"
  pwr install "$work/$v.bundle" --trust "$work/test_only_gpu.pub" --root "$root" > "$OUT/logs/install-$v.out" 2>&1 \
    || note "install $v failed: $(tail -3 "$OUT/logs/install-$v.out")"
  note "install $v: $(grep -c . "$OUT/logs/install-$v.out") lines; $(grep -i 'skipped\|E_' "$OUT/logs/install-$v.out" | head -3 | tr '\n' ' ')"
  {
    echo "## $v: installed files carrying the capture path"
    grep -rlaF "/capture/staging/" "$root/.prewarm/versions" 2>/dev/null | sed "s|$root/.prewarm/versions/[^/]*/||" \
      | awk -F/ '{ n[$1]++; if (n[$1] <= 6) print "  " $0 } END { for (k in n) print "  kind " k ": " n[k] " files" }'
    first=$(grep -rlaF "/capture/staging/" "$root/.prewarm/versions" 2>/dev/null | head -3)
    for f in $first; do
      echo "  context in ${f##*/}:"; grep -aoE ".{0,60}/capture/staging/.{0,100}" "$f" | head -2 | cat -v | sed 's/^/    /'
    done
  } >> "$OUT/paths.md"
  # Where the build captured: the path every carried file names (up to /capture/staging/).
  built_at=$(grep -rhaoE "/[^[:space:]'\"]*/capture/staging/" "$root/.prewarm/versions" 2>/dev/null | head -1)
  log="$OUT/logs/exec-$v"; t=$(now)
  pwr exec --root "$root" --audit "$log.audit.json" -- "$PYTHON" "$SCRIPT" "${MODEL[@]}" --precision "$PRECISION" \
    > "$log.json" 2> "$log.err"
  rc=$?
  note "exec $v: rc $rc in $(elapsed "$t") s; $(grep -o 'audit:.*' "$log.err" | head -1); $(tail -1 "$log.json" | cut -c1-300)"
  if [ -n "$built_at" ] && [ -e "$built_at" ]; then
    note "exec $v wrote at the build's path $built_at: $(find "$built_at" -type f | sed "s|$built_at||" | head -8 | tr '\n' ' ')"
  else
    note "exec $v: nothing at the build's path (${built_at:-none carried})"
  fi
done
cat "$OUT/paths.md" >&2
