#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real PyTorch on the CPU (setup.sh's pinned environment: TORCH_PYTHON): a small
# transformers model (tiny_compile.py, Qwen2 from a config, random weights, no
# download) under torch.compile, whose Inductor C++ g++ compiles.
#   1. cold, saving PyTorch's own Mega-Cache; warm in place (a new process on
#      a copy of the cold run's Inductor cache: the application restarted on
#      the same machine); a new process loading the Mega-Cache (it re-runs
#      Dynamo);
#   2. `prewarm build` of a command workload with the kind KIND (dynamo:
#      Inductor's cache plus Dynamo's precompiled frames, with pycache, the
#      Python bytecode of everything imported; inductor: Inductor's alone):
#      captured, signed, the hit proof reuses everything;
#   3. install as an init container does it (docker/kubernetes/prewarm-init.yaml):
#      no python3 in PATH, no PREWARM_PYTHON, an otherwise empty environment;
#      the torch slices install because the installer reads torch's, triton's
#      and Python's versions from the venv's files at the site-packages the
#      build recorded (the venv is the application's environment, seen by the
#      init container at the same path, as from a shared volume);
#      then `exec --audit`: the unmodified script reuses every entry (as many
#      as the build's proof reused: the proof predicts the install), compiles
#      nothing new, and (dynamo) loads its frame and traces nothing and reads
#      the shipped bytecode (exec's PYTHONPYCACHEPREFIX replaces the caller's);
#      (dynamo) the application container's step of the same example: a shell
#      that sources the env.sh the init step wrote, then runs the script;
#   4. (dynamo) another model (one more layer: the frame's key is the same,
#      its guards fail) through the same bundle: a normal compile, correct.
# Every run compares the compiled logits with eager mode (tiny_compile.py
# exits 1 otherwise). Every application run models an image without
# bytecode, as the GPU machine's (PYTHONDONTWRITEBYTECODE=1, no __pycache__):
# this venv has pip's .pyc beside its sources, so runs point
# PYTHONPYCACHEPREFIX at an empty directory, where Python reads none and,
# with PYTHONDONTWRITEBYTECODE, writes none. Prints the figures side by side
# (cold, warm in place, Mega-Cache, bundle) and the ratios bundle/warm and
# bundle/Mega-Cache of the first compiled call and of the first token from
# process start; they are printed, never asserted (speed goals live in
# bench/run's torch_compile_cpu).
# Env: TORCH_PYTHON, PREWARM, PREWARM_RUNTIME, TARGET (registry target of the
# build, default cpu); argument: KIND (default dynamo).
# Cost on the 2-core CI machine: eight Python processes, each importing torch
# (~6 s, ~10 s without bytecode) and running Inductor's ISA probe; about 5 to
# 8 minutes (322 s and 450 s in two runs at load about 3, before the env.sh
# step, which adds one such process: ~40 s).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
KIND=${1:-dynamo}
SCRIPT="$(cd "$(dirname "$0")" && pwd)/tiny_compile.py"
PYTHON=${TORCH_PYTHON:-}
[ -n "$PYTHON" ] && [ -x "$PYTHON" ] || skip "no torch environment (./setup.sh test makes it: tests/python/requirements.txt)"
"$PYTHON" -c 'import torch, transformers' 2>/dev/null || skip "$PYTHON cannot import torch and transformers"
command -v g++ > /dev/null || skip "no g++: Inductor's CPU backend compiles C++"
make_scratch torch
# No PREWARM_PYTHON: the installer finds the venv's frameworks where the
# build recorded them, as it must for any application in a venv.
export HF_HUB_OFFLINE=1
unset PREWARM_PYTHON
# Nothing of the user's: every cache this test reads it made itself.
unset TORCHINDUCTOR_CACHE_DIR TRITON_CACHE_DIR TORCH_CACHING_PRECOMPILE PYTHONPYCACHEPREFIX
export HOME="$SCRATCH/home" XDG_CACHE_HOME="$SCRATCH/home/.cache"
mkdir -p "$HOME" "$SCRATCH/no-bytecode"
# The image without bytecode, for every application run (exec replaces the
# prefix with the installed pycache tree where the bundle has one).
APP_ENV=(PYTHONDONTWRITEBYTECODE=1 PYTHONPYCACHEPREFIX="$SCRATCH/no-bytecode")
KINDS=$KIND
[ "$KIND" = dynamo ] && KINDS="dynamo, pycache"

run_app() { # NAME [ENV=VALUE...] -- ARGS: stdout in NAME.json, stderr in NAME.err
  local name=$1; shift
  env "$@" > "$SCRATCH/$name.json" 2> "$SCRATCH/$name.err" || { tail -20 "$SCRATCH/$name.err" >&2; fail "$name failed"; }
}

step "cold, saving the Mega-Cache"
run_app cold "${APP_ENV[@]}" TORCHINDUCTOR_CACHE_DIR="$SCRATCH/cold" "$PYTHON" "$SCRIPT" --save-megacache "$SCRATCH/mega.bin"
[ "$(last_json_field "$SCRATCH/cold.json" fxgraph_cache_miss)" -ge 1 ] || fail "the cold run compiled no graph"
step "warm in place: a new process on a copy of the cold run's cache"
cp -a "$SCRATCH/cold" "$SCRATCH/warm"
run_app warm "${APP_ENV[@]}" TORCHINDUCTOR_CACHE_DIR="$SCRATCH/warm" "$PYTHON" "$SCRIPT"
[ "$(last_json_field "$SCRATCH/warm.json" fxgraph_cache_miss)" -eq 0 ] || fail "the warm run compiled a graph again"
step "Mega-Cache loaded by a new process"
run_app mega "${APP_ENV[@]}" TORCHINDUCTOR_CACHE_DIR="$SCRATCH/mega" "$PYTHON" "$SCRIPT" --load-megacache "$SCRATCH/mega.bin"
[ "$(last_json_field "$SCRATCH/mega.json" fxgraph_cache_miss)" -eq 0 ] || fail "the Mega-Cache run compiled a graph again"

step "prewarm build: kind $KIND captured, signed, proven"
"$PREWARM" keygen --out "$SCRATCH/test_only_torch" > /dev/null 2>&1 || fail "keygen failed"
cat > "$SCRATCH/manifest.yaml" <<YAML
version: 1
models:
  - name: tiny-qwen2
    command:
      argv: [$PYTHON, $SCRIPT, --precision, "{precision}"]
      env: {HF_HUB_OFFLINE: "1", PYTHONDONTWRITEBYTECODE: "1"}
      timeout: 15m
      kinds: [$KINDS]
precisions: [fp32]
targets: [${TARGET:-cpu}]
YAML
"$PREWARM" build "$SCRATCH/manifest.yaml" --key "$SCRATCH/test_only_torch.key" --out "$SCRATCH/bundle" \
  > /dev/null 2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "prewarm build failed"; }
grep -E "hit proof: $KIND: [0-9]+ reused, 0 new" "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "the hit proof found new $KIND entries"; }
if [ "$KIND" = dynamo ]; then
  grep -E "hit proof: .*pycache: [0-9]+ reused, 0 new" "$SCRATCH/build.err" > /dev/null || { cat "$SCRATCH/build.err" >&2; fail "the hit proof found new bytecode"; }
fi
"$PREWARM" inspect "$SCRATCH/bundle" --trust "$SCRATCH/test_only_torch.pub" > "$SCRATCH/inspect.txt"
grep -q "framework.torch" "$SCRATCH/inspect.txt" || { cat "$SCRATCH/inspect.txt" >&2; fail "the slice does not require the torch version"; }
if [ "$KIND" = dynamo ]; then
  grep -q "framework.python" "$SCRATCH/inspect.txt" || { cat "$SCRATCH/inspect.txt" >&2; fail "the dynamo slice does not require the Python version"; }
fi

SITE_PACKAGES=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
grep -qF "python   $SITE_PACKAGES " "$SCRATCH/inspect.txt" || { cat "$SCRATCH/inspect.txt" >&2; fail "the slice does not record the venv's site-packages $SITE_PACKAGES"; }

step "init container (no Python, no PREWARM_PYTHON): install, env.sh; then exec --audit: nothing compiled again"
mkdir -p "$SCRATCH/no-python-bin"
cat > "$SCRATCH/init-step.sh" <<SH
set -e
"$PREWARM_RUNTIME" install "$SCRATCH/bundle" --trust "$SCRATCH/test_only_torch.pub" --root "$SCRATCH/root" --on-failure warn
"$PREWARM_RUNTIME" env --root "$SCRATCH/root" --format sh > "$SCRATCH/root/env.sh"
SH
env -i HOME="$HOME" PATH="$SCRATCH/no-python-bin" /bin/sh "$SCRATCH/init-step.sh" \
  > /dev/null 2> "$SCRATCH/install.err" || { cat "$SCRATCH/install.err" >&2; fail "the init step failed"; }
if grep -E "skipped|framework versions not found" "$SCRATCH/install.err"; then
  fail "a slice was skipped without Python on PATH (the recorded site-packages were not read)"
fi
[ -d "$SCRATCH/root/$KIND" ] || { cat "$SCRATCH/install.err" >&2; fail "no $KIND cache installed under the root"; }
if [ "$KIND" = dynamo ]; then
  find "$SCRATCH/root/dynamo/dynamo" -name entry | grep -q . || fail "no Dynamo entry installed"
  "$PREWARM_RUNTIME" env --root "$SCRATCH/root" | grep -q "TORCH_CACHING_PRECOMPILE" || fail "env does not turn precompile on"
  "$PREWARM_RUNTIME" env --root "$SCRATCH/root" | grep -q "PYTHONPYCACHEPREFIX=.*pycache" || fail "env does not export PYTHONPYCACHEPREFIX"
fi
env "${APP_ENV[@]}" "$PREWARM_RUNTIME" exec --root "$SCRATCH/root" --audit "$SCRATCH/exec.audit.json" -- "$PYTHON" "$SCRIPT" \
  > "$SCRATCH/installed.json" 2> "$SCRATCH/installed.err" || { tail -20 "$SCRATCH/installed.err" >&2; fail "exec failed"; }
grep "audit:" "$SCRATCH/installed.err" || true
[ "$(audit_field "$SCRATCH/exec.audit.json" "$KIND" new_files)" -eq 0 ] || fail "$KIND compiled anew under the root"
[ "$(audit_field "$SCRATCH/exec.audit.json" "$KIND" reused_files)" -gt 0 ] || fail "no $KIND reuse measured"
# The proof ran on a copy at another path than the capture, and the install
# is at a third: the proof's count is the install's.
PROVEN=$(grep -oE "hit proof: .*$KIND: [0-9]+ reused" "$SCRATCH/build.err" | grep -oE "$KIND: [0-9]+" | tail -1 | grep -oE "[0-9]+$")
[ "$(audit_field "$SCRATCH/exec.audit.json" "$KIND" reused_files)" -eq "$PROVEN" ] \
  || fail "the installed application reused $(audit_field "$SCRATCH/exec.audit.json" "$KIND" reused_files) $KIND files, the proof $PROVEN"
[ "$(last_json_field "$SCRATCH/installed.json" fxgraph_cache_miss)" -eq 0 ] || fail "a graph was compiled again under the root"
if [ "$KIND" = dynamo ]; then
  [ "$(last_json_field "$SCRATCH/installed.json" dynamo_cache_hit)" -eq 1 ] || { cat "$SCRATCH/installed.json"; fail "Dynamo's frame was not loaded"; }
  # Loaded is not used: a frame whose guards fail is traced again, silently.
  [ "$(last_json_field "$SCRATCH/installed.json" frames_traced)" -eq 0 ] || { cat "$SCRATCH/installed.json"; fail "Dynamo traced the frame again"; }
  # The caller's PYTHONPYCACHEPREFIX (the empty directory) gave way to the
  # bundle's: the application asked for its caches by running under exec.
  [ "$(audit_field "$SCRATCH/exec.audit.json" pycache reused_files)" -gt 100 ] || fail "the shipped bytecode was not read"
  [ "$(audit_field "$SCRATCH/exec.audit.json" pycache new_files)" -eq 0 ] || fail "Python compiled bytecode under the root"
fi

if [ "$KIND" = dynamo ]; then
  step "the application container's step: source env.sh, run the script"
  env "${APP_ENV[@]}" /bin/sh -c '. "$1/root/env.sh" && exec "$2" "$3"' sh "$SCRATCH" "$PYTHON" "$SCRIPT" \
    > "$SCRATCH/app-step.json" 2> "$SCRATCH/app-step.err" || { tail -20 "$SCRATCH/app-step.err" >&2; fail "the app step failed"; }
  [ "$(last_json_field "$SCRATCH/app-step.json" dynamo_cache_hit)" -eq 1 ] || { cat "$SCRATCH/app-step.json"; fail "the app step did not load Dynamo's frame"; }
  [ "$(last_json_field "$SCRATCH/app-step.json" frames_traced)" -eq 0 ] || { cat "$SCRATCH/app-step.json"; fail "the app step traced the frame again"; }
  [ "$(last_json_field "$SCRATCH/app-step.json" fxgraph_cache_miss)" -eq 0 ] || fail "the app step compiled a graph again"

  step "another model through the same bundle: guards fail, a normal compile, correct"
  env "${APP_ENV[@]}" "$PREWARM_RUNTIME" exec --root "$SCRATCH/root" -- "$PYTHON" "$SCRIPT" --layers 3 \
    > "$SCRATCH/other.json" 2> "$SCRATCH/other.err" || { tail -20 "$SCRATCH/other.err" >&2; fail "the other model failed"; }
  [ "$(last_json_field "$SCRATCH/other.json" fxgraph_cache_miss)" -ge 1 ] || { cat "$SCRATCH/other.json"; fail "the 3-layer model reused the 2-layer graph"; }
  [ "$(last_json_field "$SCRATCH/other.json" frames_traced)" -ge 1 ] || { cat "$SCRATCH/other.json"; fail "the 3-layer model ran the 2-layer frame"; }
fi
[ -z "$(ls -A "$SCRATCH/no-bytecode")" ] || fail "an application run wrote bytecode despite PYTHONDONTWRITEBYTECODE=1"

"$PYTHON" - "$SCRATCH" <<'PY'
import json, sys
d = sys.argv[1]
row = lambda name: json.loads(open(f"{d}/{name}.json").read().strip().splitlines()[-1])
cold, warm, mega, inst = row("cold"), row("warm"), row("mega"), row("installed")
# The first compiled call includes torch.compile() itself: that is where a
# precompiled frame is loaded. Mega-Cache's includes its load (before it, in
# the same process); the first result counts from process start.
fc = lambda r: r["first_compiled_call_s"] + r["megacache_load_s"]
fr = lambda r: r["first_result_s"]
print("%-33s %8s %8s %18s %8s %12s %18s" % ("seconds", "cold", "warm", "Mega-Cache(+load)", "bundle",
                                            "bundle/warm", "bundle/Mega-Cache"))
for name, f in (("first compiled call", fc), ("first token (from process start)", fr)):
    print("%-33s %8.2f %8.2f %18s %8.2f %11.2fx %17.2fx"
          % (name, f(cold), f(warm), "%.2f (+%.2f)" % (f(mega), mega["megacache_load_s"]), f(inst),
             f(inst) / f(warm), f(inst) / f(mega)))
PY
pass
