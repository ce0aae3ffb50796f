#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `prewarm build --capture-root ROOT` on the real PoCL device, then
# `prewarm-runtime install --root ROOT` and `exec --audit` (capture_root.hpp):
#   1. a path-keyed cache (a stand-in for Triton keying Inductor's kernels by
#      the path of their source: the entry's name is a hash of its cache
#      directory) captured as usual: verify: require fails, naming the
#      build-time path;
#   2. a non-empty ROOT is refused, naming it, and kept as it was;
#   3. the pyopencl warm-up (PoCL) and the path-keyed stand-in captured at
#      ROOT: the hit proof hits both, no build-time path is named, ROOT and
#      the parent the build created are gone afterwards; the installed files
#      name ROOT and never the build's staging;
#   4. installed at ROOT: exec --audit reuses everything, 0 new;
#   5. a failing command, and a build stopped by SIGTERM, leave ROOT as found.
# Env: PREWARM, PREWARM_RUNTIME, EXAMPLES.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
[ -n "${PREWARM:-}" ] && [ -n "${PREWARM_RUNTIME:-}" ] || skip "prewarm or prewarm-runtime not built"
: "${EXAMPLES:?}"
require_opencl_device
PYTHON=/usr/bin/python3
"$PYTHON" -c "import pyopencl" 2>/dev/null || skip "python3-pyopencl not installed for $PYTHON"
make_scratch capture-root
"$PREWARM" keygen --out "$SCRATCH/test_only_root" > /dev/null 2>&1 || fail "keygen failed"
ROOT="$SCRATCH/opt/prewarm" # neither it nor its parent exists

cat > "$SCRATCH/pathkeyed.sh" <<'SH'
k=$(printf %s "$PATHKEYED_CACHE_DIR" | md5sum | cut -c1-16)
if [ -f "$PATHKEYED_CACHE_DIR/$k/kernel" ]; then
  cat "$PATHKEYED_CACHE_DIR/$k/kernel" > /dev/null
else
  mkdir -p "$PATHKEYED_CACHE_DIR/$k" && printf 'source: %s/%s/kernel.py\n' "$PATHKEYED_CACHE_DIR" "$k" > "$PATHKEYED_CACHE_DIR/$k/kernel"
fi
SH
PATHKEYED_MODEL="  - name: pathkeyed
    command:
      argv: [sh, $SCRATCH/pathkeyed.sh]
      caches:
        - {name: pathkeyed, variable: PATHKEYED_CACHE_DIR}
      kinds: [pocl]
      verify: require"
PYOPENCL_MODEL="  - name: pyopencl
    command:
      argv: [$PYTHON, $EXAMPLES/pyopencl_warmup.py]
      env: {PYOPENCL_NO_CACHE: \"1\", PYOPENCL_CTX: \"0\"}
      timeout: 10m
      kinds: [pocl]
      verify: require"
# manifest NAME MODEL...: $SCRATCH/NAME.yaml
manifest() {
  local name=$1; shift
  { echo "version: 1"; echo "models:"; printf '%s\n' "$@"; echo "precisions: [fp32]"; echo "targets: [cpu]"; } \
    > "$SCRATCH/$name.yaml"
}
# build NAME [ARGS...]: exit status; stderr in $SCRATCH/NAME.err
build() {
  local name=$1; shift
  local rc=0
  "$PREWARM" build "$SCRATCH/$name.yaml" --key "$SCRATCH/test_only_root.key" --out "$SCRATCH/$name.bundle" "$@" \
    > /dev/null 2> "$SCRATCH/$name.err" || rc=$?
  return $rc
}

step "without --capture-root: the path-keyed cache misses, and the build-time path is named"
manifest pathkeyed "$PATHKEYED_MODEL"
if build pathkeyed; then cat "$SCRATCH/pathkeyed.err" >&2; fail "a path-keyed cache captured in staging passed verify: require"; fi
grep -q "build-time path" "$SCRATCH/pathkeyed.err" || { cat "$SCRATCH/pathkeyed.err" >&2; fail "the cause is not named"; }

step "a non-empty root is refused, naming it, and kept"
mkdir -p "$ROOT" && echo data > "$ROOT/keep.txt"
rc=0; build pathkeyed --capture-root "$ROOT" || rc=$?
[ "$rc" -eq 2 ] || { cat "$SCRATCH/pathkeyed.err" >&2; fail "exit $rc for a non-empty root, expected 2"; }
grep -F -- "--capture-root \"$ROOT\": not empty (it holds \"keep.txt\")" "$SCRATCH/pathkeyed.err" \
  || { cat "$SCRATCH/pathkeyed.err" >&2; fail "the refusal does not name the root and what it holds"; }
[ "$(cat "$ROOT/keep.txt")" = data ] || fail "the user's file was touched"
rm -rf "$SCRATCH/opt"

step "captured at the root: both hit, no build-time path, the root given back"
manifest both "$PYOPENCL_MODEL" "$PATHKEYED_MODEL"
build both --capture-root "$ROOT" || { cat "$SCRATCH/both.err" >&2; fail "the build at the root failed"; }
grep -o "hit proof: pocl: [0-9]* reused, 0 new" "$SCRATCH/both.err" || { cat "$SCRATCH/both.err" >&2; fail "pocl did not hit"; }
grep -o "hit proof: custom/pathkeyed: 1 reused, 0 new" "$SCRATCH/both.err" \
  || { cat "$SCRATCH/both.err" >&2; fail "the path-keyed cache did not hit at the root"; }
! grep "build-time path" "$SCRATCH/both.err" || fail "a build-time path is still named"
[ ! -e "$SCRATCH/opt" ] || fail "the root (or the parent the build made) was left behind: $(ls -A "$SCRATCH/opt")"

step "installed at the root: the files name the root, never the build's staging"
# PATHKEYED_CACHE_DIR is no vetted cache-locating name: the image's policy allows it.
printf 'version: 1\nkeys:\n  - file: test_only_root.pub\ninstall:\n  environment: [PATHKEYED_CACHE_DIR]\n' > "$SCRATCH/policy.yaml"
"$PREWARM_RUNTIME" install "$SCRATCH/both.bundle" --trust "$SCRATCH/policy.yaml" --root "$ROOT" \
  > /dev/null 2> "$SCRATCH/install.err" || { cat "$SCRATCH/install.err" >&2; fail "install failed"; }
grep -rqF "source: $ROOT/custom/pathkeyed/" "$ROOT/custom/pathkeyed" || fail "the path-keyed entry does not name the root"
! grep -rlF "prewarm-build-" "$ROOT/pocl" "$ROOT/custom" || fail "installed files hold the build's staging path"

step "exec --audit at the root: nothing new"
PYOPENCL_NO_CACHE=1 PYOPENCL_CTX=0 "$PREWARM_RUNTIME" exec --root "$ROOT" --paths root --audit "$SCRATCH/pyopencl.audit.json" -- "$PYTHON" "$EXAMPLES/pyopencl_warmup.py" \
  > /dev/null 2> "$SCRATCH/exec.err" || { cat "$SCRATCH/exec.err" >&2; fail "pyopencl failed under exec"; }
grep "audit:" "$SCRATCH/exec.err" || true
[ "$(audit_field "$SCRATCH/pyopencl.audit.json" pocl new_files)" -eq 0 ] || fail "pyopencl compiled anew at the root"
[ "$(audit_field "$SCRATCH/pyopencl.audit.json" pocl reused_files)" -gt 0 ] || fail "no pocl reuse measured"
"$PREWARM_RUNTIME" exec --root "$ROOT" --paths root --audit "$SCRATCH/pathkeyed.audit.json" -- sh "$SCRATCH/pathkeyed.sh" \
  2> "$SCRATCH/exec2.err" || { cat "$SCRATCH/exec2.err" >&2; fail "the stand-in failed under exec"; }
[ "$(audit_field "$SCRATCH/pathkeyed.audit.json" custom/pathkeyed new_files)" -eq 0 ] || fail "the path-keyed cache missed at the root"
[ "$(audit_field "$SCRATCH/pathkeyed.audit.json" custom/pathkeyed reused_files)" -gt 0 ] || fail "no path-keyed reuse measured"
rm -rf "$SCRATCH/opt"

step "a failing command leaves the root as found (absent; empty)"
manifest failing "  - name: failing
    command:
      argv: [sh, -c, 'mkdir -p \"\$POCL_CACHE_DIR/x\" && echo half > \"\$POCL_CACHE_DIR/x/program.bc\"; exit 3']
      kinds: [pocl]"
if build failing --capture-root "$ROOT"; then fail "a failing command built"; fi
[ ! -e "$SCRATCH/opt" ] || fail "an absent root was left behind after a failed job"
mkdir -p "$ROOT"
if build failing --capture-root "$ROOT"; then fail "a failing command built"; fi
[ -d "$ROOT" ] && [ -z "$(ls -A "$ROOT")" ] || fail "an empty root is not empty after a failed job: $(ls -A "$ROOT")"

step "SIGTERM during the capture leaves the root as found"
manifest slow "  - name: slow
    command:
      argv: [sh, -c, 'mkdir -p \"\$POCL_CACHE_DIR/x\" && echo half > \"\$POCL_CACHE_DIR/x/program.bc\" && sleep 60']
      kinds: [pocl]"
"$PREWARM" build "$SCRATCH/slow.yaml" --key "$SCRATCH/test_only_root.key" --out "$SCRATCH/slow.bundle" \
  --capture-root "$ROOT" > /dev/null 2> "$SCRATCH/slow.err" &
pid=$!
for _ in $(seq 100); do [ -e "$ROOT/pocl/x/program.bc" ] && break; sleep 0.1; done
[ -e "$ROOT/pocl/x/program.bc" ] || { kill $pid; fail "the slow command never wrote into the root"; }
kill -TERM $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 143 ] || { cat "$SCRATCH/slow.err" >&2; fail "build exit $rc after SIGTERM, expected 143"; }
[ -d "$ROOT" ] && [ -z "$(ls -A "$ROOT")" ] || fail "the root is not empty after SIGTERM: $(ls -A "$ROOT")"
pass
