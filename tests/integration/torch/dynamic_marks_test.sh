#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real PyTorch on the CPU: an application that marks its input dynamic
# (mark_dynamic, three batch sizes: dynamic_marks_app.py) through the dynamo
# kind, built with no flag, installed at another root. PyTorch 2.11 saves a
# frame's guard inputs without the marks mark_dynamic set, so the loaded
# frame's rebuilt guards rejected every marked input and Dynamo traced it again
# in every start; the capture hook keeps the marks (precompile_hook.py,
# KeepDynamoMarks). Asserts: the build's proof (verify: require) passes; the
# installed application loads its frame, traces nothing, compiles nothing and
# audits 0 new; results equal eager. Five Python processes importing torch:
# about 1 to 2 minutes on the 2-core CI machine.
# Env: TORCH_PYTHON, PREWARM, PREWARM_RUNTIME.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
APP="$(cd "$(dirname "$0")" && pwd)/dynamic_marks_app.py"
PYTHON=${TORCH_PYTHON:-}
[ -n "$PYTHON" ] && [ -x "$PYTHON" ] || skip "no torch environment (./setup.sh test makes it: tests/python/requirements.txt)"
"$PYTHON" -c 'import torch' 2>/dev/null || skip "$PYTHON cannot import torch"
command -v g++ > /dev/null || skip "no g++: Inductor's CPU backend compiles C++"
make_scratch torch-marks
unset PREWARM_PYTHON TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR TORCH_CACHING_PRECOMPILE
export HOME="$SCRATCH/home" XDG_CACHE_HOME="$SCRATCH/home/.cache"
mkdir -p "$HOME"

step "prewarm build: the dynamo kind, verify: require"
"$PREWARM" keygen --out "$SCRATCH/test_only_marks" > /dev/null 2>&1 || fail "keygen failed"
cat > "$SCRATCH/manifest.yaml" <<YAML
version: 1
models:
  - name: marked
    command:
      argv: [$PYTHON, $APP]
      timeout: 10m
      kinds: [dynamo]
      verify: require
precisions: [fp32]
targets: [cpu]
YAML
"$PREWARM" build "$SCRATCH/manifest.yaml" --key "$SCRATCH/test_only_marks.key" --out "$SCRATCH/bundle" \
  > /dev/null 2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "prewarm build failed (the proof traced the frame again?)"; }
grep -E "hit proof: dynamo: [0-9]+ reused, 0 new" "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "the proof found new dynamo entries"; }
if grep -E "traced [0-9]+ graph" "$SCRATCH/build.err"; then fail "the proof's re-run traced the frame again"; fi

step "install at another root; exec --audit: the frame loads for every batch size"
"$PREWARM_RUNTIME" install "$SCRATCH/bundle" --trust "$SCRATCH/test_only_marks.pub" --root "$SCRATCH/elsewhere/root" \
  > /dev/null 2> "$SCRATCH/install.err" || { cat "$SCRATCH/install.err" >&2; fail "install failed"; }
"$PREWARM_RUNTIME" exec --root "$SCRATCH/elsewhere/root" --audit "$SCRATCH/exec.audit.json" -- "$PYTHON" "$APP" \
  > "$SCRATCH/installed.json" 2> "$SCRATCH/installed.err" || { tail -20 "$SCRATCH/installed.err" >&2; fail "exec failed (or results differ from eager)"; }
cat "$SCRATCH/installed.json"
[ "$(last_json_field "$SCRATCH/installed.json" dynamo_cache_hit)" -eq 1 ] || fail "Dynamo's frame was not loaded"
[ "$(last_json_field "$SCRATCH/installed.json" frames_traced)" -eq 0 ] || fail "Dynamo traced the marked frame again"
[ "$(last_json_field "$SCRATCH/installed.json" fxgraph_cache_miss)" -eq 0 ] || fail "a graph was compiled again"
[ "$(audit_field "$SCRATCH/exec.audit.json" dynamo new_files)" -eq 0 ] || fail "dynamo compiled anew under the root"
pass
