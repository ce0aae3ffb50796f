#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Command workloads on the real PoCL device, with the pyopencl warm-up of
# manifests/examples (pyopencl's own cache off: PYOPENCL_NO_CACHE=1; Debian's
# python3-pyopencl belongs to /usr/bin/python3):
#   1. cold: a fresh process with an empty PoCL cache;
#   2. capture: the command module runs the script with POCL_CACHE_DIR
#      redirected into staging; the capture is non-empty and clean;
#   3. the captured cache, used by a new process: no new cache entries (all
#      hits) and the first result sooner than cold;
#   4. when `prewarm build` runs command workloads: bundle -> install into a
#      fresh root -> `prewarm-runtime exec` the script: again no new entries
#      and faster than cold. Prints the cold / installed ratio.
# Env: CAPTURE (the command_capture test driver), PREWARM, PREWARM_RUNTIME,
# EXAMPLES (manifests/examples).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${CAPTURE:?}" "${EXAMPLES:?}"
PREWARM=${PREWARM:-}
PREWARM_RUNTIME=${PREWARM_RUNTIME:-}
PYTHON=/usr/bin/python3
SCRIPT="$EXAMPLES/pyopencl_warmup.py"

require_opencl_device
"$PYTHON" -c "import pyopencl" 2>/dev/null || skip "python3-pyopencl not installed for $PYTHON"
# Not make_scratch: its EXIT trap would fire in the $(...) subshell.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-command-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export PYOPENCL_NO_CACHE=1 PYOPENCL_CTX=0

first_result() { "$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["first_result_s"])' "$1"; }
# Cache entries, without PoCL's per-process temporaries (tempfile_*), which
# it creates even on a hit.
entries() { (cd "$1" && find . ! -name 'tempfile_*' | LC_ALL=C sort); }
faster() { "$PYTHON" -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$1" "$2"; }

step "cold: empty PoCL cache"
mkdir "$scratch/cold-cache"
POCL_CACHE_DIR="$scratch/cold-cache" "$PYTHON" "$SCRIPT" > "$scratch/cold.json"
cold=$(first_result "$scratch/cold.json")
echo "cold first result: $cold s"

step "capture through the command module"
mkdir "$scratch/work"
"$CAPTURE" "$scratch/work" pocl fp32 PYOPENCL_NO_CACHE=1 -- "$PYTHON" "$SCRIPT" --precision '{precision}' \
  > "$scratch/capture.json" 2> "$scratch/capture.err" || { cat "$scratch/capture.err" >&2; fail "capture failed"; }
files=$("$PYTHON" -c 'import json,sys; r=json.load(open(sys.argv[1])); print([k for k in r["kinds"] if k["kind"]=="pocl"][0]["files"])' "$scratch/capture.json")
[ "$files" -gt 0 ] || fail "nothing captured for pocl"
staged="$scratch/work/staging/pocl"
find "$staged" -name '*.so' | grep -q . || fail "no compiled kernels (.so) in the capture"
! find "$staged" -name 'tempfile_*' | grep -q . || fail "PoCL temporaries were not cleaned"
grep -q '"precision": "fp32"' "$scratch/work/command.log" || fail "{precision} was not expanded"
echo "captured $files files"

step "a new process on the captured cache"
cp -a "$staged" "$scratch/captured"
entries "$scratch/captured" > "$scratch/before"
POCL_CACHE_DIR="$scratch/captured" "$PYTHON" "$SCRIPT" > "$scratch/captured.json"
entries "$scratch/captured" > "$scratch/after"
diff "$scratch/before" "$scratch/after" || fail "PoCL compiled again: new cache entries above"
captured=$(first_result "$scratch/captured.json")
echo "captured-cache first result: $captured s"
faster "$captured" "$cold" || fail "captured cache ($captured s) not faster than cold ($cold s)"

if [ -z "$PREWARM" ] || [ -z "$PREWARM_RUNTIME" ]; then
  echo "bundle/install part not run: prewarm or prewarm-runtime not built"
  pass
fi

step "bundle -> install -> exec"
mkdir -p "$scratch/keys"
"$PREWARM" keygen --out "$scratch/keys/test_only_command" > /dev/null 2>&1 || fail "keygen failed"
cat > "$scratch/manifest.yaml" <<YAML
version: 1
models:
  - name: pyopencl
    command:
      argv: [$PYTHON, $SCRIPT, --precision, "{precision}"]
      env: {PYOPENCL_NO_CACHE: "1", PYOPENCL_CTX: "0"}
      timeout: 10m
      kinds: [pocl]
precisions: [fp32]
targets: [cpu]
YAML
rc=0
"$PREWARM" build "$scratch/manifest.yaml" --key "$scratch/keys/test_only_command.key" --out "$scratch/bundle" \
  2> "$scratch/build.err" || rc=$?
if [ "$rc" -ne 0 ]; then
  if grep -q -e "no executor for a run job of a command model" -e "not implemented" "$scratch/build.err"; then
    cat "$scratch/build.err"
    echo "bundle/install part not run: this prewarm build does not run command workloads yet"
    pass
  fi
  cat "$scratch/build.err" >&2
  fail "prewarm build exited $rc"
fi
expect_exit 0 "$PREWARM_RUNTIME" install "$scratch/bundle" --trust "$scratch/keys/test_only_command.pub" --root "$scratch/root"
[ -d "$scratch/root/pocl" ] || fail "no pocl cache installed under the root"
entries "$scratch/root/pocl" > "$scratch/before"
"$PREWARM_RUNTIME" exec --root "$scratch/root" -- "$PYTHON" "$SCRIPT" > "$scratch/installed.json"
entries "$scratch/root/pocl" > "$scratch/after"
diff "$scratch/before" "$scratch/after" || fail "PoCL compiled again under the installed root"
installed=$(first_result "$scratch/installed.json")
faster "$installed" "$cold" || fail "installed cache ($installed s) not faster than cold ($cold s)"
"$PYTHON" -c 'import sys; print("cold %s s, installed %s s: %.1fx" % (sys.argv[1], sys.argv[2], float(sys.argv[1]) / float(sys.argv[2])))' "$cold" "$installed"
pass
