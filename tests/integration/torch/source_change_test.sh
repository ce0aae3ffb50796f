#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The dynamo kind when the model's source changed after the bundle was built
# (an application updated, its old bundle kept): real PyTorch on the CPU.
#   1. prewarm build of a command workload, kind dynamo: proof reuses all;
#   2. install -> exec --audit: the precompiled frame loads, nothing traced;
#   3. the model's forward edited (same lines, another factor): PyTorch
#      rejects the frame ("Source code changes detected"), traces and
#      compiles the new source: the result equals eager mode's, and the audit
#      says Dynamo traced a graph instead of passing the frame off as reused;
#   4. another torch on the host (an interpreter that reports torch 2.10.0,
#      a stand-in for the probe: one torch is installed here): the install
#      refuses the slice by its framework.torch requirement, and the
#      application, run through exec all the same, compiles as without
#      prewarm and computes the same result.
# Env: TORCH_PYTHON, PREWARM, PREWARM_RUNTIME. Cost on the 2-core CI machine:
# four Python processes importing torch plus the build's two: ~2-3 minutes.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${TORCH_PYTHON:-}
[ -n "$PYTHON" ] && [ -x "$PYTHON" ] || skip "no torch environment (./setup.sh test makes it: tests/python/requirements.txt)"
"$PYTHON" -c 'import torch' 2>/dev/null || skip "$PYTHON cannot import torch"
command -v g++ > /dev/null || skip "no g++: Inductor's CPU backend compiles C++"
make_scratch torch-source-change
unset TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR TORCH_CACHING_PRECOMPILE PYTHONPYCACHEPREFIX
# No bytecode: the edit below keeps the file's size, and Python would trust
# a .pyc written within the same second (its own rule, not this test's).
export HOME="$SCRATCH/home" PYTHONDONTWRITEBYTECODE=1 PREWARM_PYTHON="$PYTHON"
mkdir -p "$HOME" "$SCRATCH/app"
cp "$here/source_change_model.py" "$here/source_change_app.py" "$SCRATCH/app/"

step "prewarm build: kind dynamo, proven"
"$PREWARM" keygen --out "$SCRATCH/test_only_torch" > /dev/null 2>&1 || fail "keygen failed"
cat > "$SCRATCH/manifest.yaml" <<YAML
version: 1
models:
  - name: scaled
    command:
      argv: [$PYTHON, source_change_app.py]
      cwd: $SCRATCH/app
      timeout: 10m
      kinds: [dynamo]
precisions: [fp32]
targets: [cpu]
YAML
"$PREWARM" build "$SCRATCH/manifest.yaml" --key "$SCRATCH/test_only_torch.key" --out "$SCRATCH/bundle" \
  > /dev/null 2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "prewarm build failed"; }
grep -E "hit proof: dynamo: [0-9]+ reused, 0 new" "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "the hit proof found new dynamo entries"; }
! grep -q "Dynamo traced" "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "the proof's re-run traced a graph"; }
"$PREWARM_RUNTIME" install "$SCRATCH/bundle" --trust "$SCRATCH/test_only_torch.pub" --root "$SCRATCH/root" \
  > /dev/null 2> "$SCRATCH/install.err" || { cat "$SCRATCH/install.err" >&2; fail "install failed"; }

step "installed, source unchanged: the frame loads, nothing traced"
(cd "$SCRATCH/app" && "$PREWARM_RUNTIME" exec --root "$SCRATCH/root" --audit "$SCRATCH/same.audit.json" -- "$PYTHON" source_change_app.py) \
  > "$SCRATCH/same.json" 2> "$SCRATCH/same.err" || { tail -20 "$SCRATCH/same.err" >&2; fail "the unchanged application failed"; }
[ "$(last_json_field "$SCRATCH/same.json" dynamo_cache_hit)" -eq 1 ] || fail "the precompiled frame was not loaded"
[ "$(last_json_field "$SCRATCH/same.json" frames_traced)" -eq 0 ] || fail "Dynamo traced the unchanged frame"
[ "$(audit_field "$SCRATCH/same.audit.json" dynamo traced_graphs)" -eq 0 ] || fail "the audit counted a trace where none happened"

step "the model's source edited: rejected by PyTorch, compiled again, correct"
sed -i 's/\* 2$/* 3/' "$SCRATCH/app/source_change_model.py"
grep -q '\* 3$' "$SCRATCH/app/source_change_model.py" || fail "the edit did not apply"
rm -rf "$SCRATCH/root" && "$PREWARM_RUNTIME" install "$SCRATCH/bundle" --trust "$SCRATCH/test_only_torch.pub" --root "$SCRATCH/root" \
  > /dev/null 2>&1 || fail "reinstall failed"
(cd "$SCRATCH/app" && "$PREWARM_RUNTIME" exec --root "$SCRATCH/root" --audit "$SCRATCH/edited.audit.json" -- "$PYTHON" source_change_app.py) \
  > "$SCRATCH/edited.json" 2> "$SCRATCH/edited.err" || { tail -20 "$SCRATCH/edited.err" >&2; fail "the edited application failed or differed from eager"; }
grep -q "Source code changes detected" "$SCRATCH/edited.err" || { tail -20 "$SCRATCH/edited.err" >&2; fail "PyTorch did not reject the frame"; }
[ "$(last_json_field "$SCRATCH/edited.json" frames_traced)" -ge 1 ] || fail "the edited model ran the old frame"
[ "$(audit_field "$SCRATCH/edited.audit.json" dynamo traced_graphs)" -ge 1 ] || { cat "$SCRATCH/edited.audit.json"; fail "the audit did not count the trace"; }
grep "audit:" "$SCRATCH/edited.err" | grep -q "Dynamo traced" || { grep "audit:" "$SCRATCH/edited.err"; fail "the audit line does not say Dynamo traced"; }

step "another torch on the host: the slice is refused, the application compiles as without prewarm"
cat > "$SCRATCH/other-torch-python" <<SH
#!/bin/sh
# Answers the framework probe as a host with torch 2.10.0 would.
exec "$PYTHON" -c 'import platform; print("framework.torch 2.10.0"); print("framework.triton 3.5.0"); print("framework.python %s" % platform.python_version())'
SH
chmod +x "$SCRATCH/other-torch-python"
rm -rf "$SCRATCH/root"
# Exit 4: no slice matches this host (runtime/cli).
expect_exit 4 env PREWARM_PYTHON="$SCRATCH/other-torch-python" "$PREWARM_RUNTIME" install "$SCRATCH/bundle" \
  --trust "$SCRATCH/test_only_torch.pub" --root "$SCRATCH/root"
echo "$LAST_STDERR" | grep -q 'E_TARGET_MISMATCH.*"framework.torch == [^"]*".* has 2.10.0' \
  || { echo "$LAST_STDERR" >&2; fail "the refusal does not name the torch requirement and the host's torch"; }
[ ! -e "$SCRATCH/root/dynamo" ] || fail "a slice made for another torch was installed"
(cd "$SCRATCH/app" && "$PREWARM_RUNTIME" exec --root "$SCRATCH/root" -- "$PYTHON" source_change_app.py) \
  > "$SCRATCH/other.json" 2> "$SCRATCH/other.err" || { tail -20 "$SCRATCH/other.err" >&2; fail "the application failed without the bundle"; }
[ "$(last_json_field "$SCRATCH/other.json" frames_traced)" -ge 1 ] || fail "the application did not compile by itself"
pass
