#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cache carried inside another variable's value, declared without a shim:
# PyTensor (C mode) finds its compiled modules under PYTENSOR_FLAGS's
# base_compiledir. The manifest declares the cache with
#   {name: pytensor, variable: PYTENSOR_FLAGS, flag: "base_compiledir={dir}", separator: ","}
# and keeps a flag of its own (floatX=float64) in PYTENSOR_FLAGS. Then:
#   - `prewarm build` runs the program with base_compiledir pointed into the
#     capture and merged into the model's PYTENSOR_FLAGS; the hit proof
#     (verify: require) reuses every module and compiles none;
#   - installed at another root, `prewarm-runtime exec --audit` runs the
#     program with floatX=float64,exception_verbosity=high,base_compiledir=
#     /somewhere/else set by the caller: the caller's flags stay (the program
#     prints exception_verbosity), its base_compiledir is replaced (and said
#     so), every module is reused, none is new, and the result is the cold
#     run's. (A flag that enters PyTensor's module keys, such as another
#     floatX, makes PyTensor add the new key to each module's key.pkl: found
#     by hash, not compiled, but rewritten, so counted new.)
#   - `env` prints the merged value.
# Real PyTensor from setup.sh's pinned environment (CPU_APPS_PYTHON); about
# 30 s (one cold compile, ~13 s, plus the build's). Env: PREWARM,
# PREWARM_RUNTIME, CPU_APPS_PYTHON.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
[ -n "${PREWARM:-}" ] && [ -n "${PREWARM_RUNTIME:-}" ] || skip "prewarm or prewarm-runtime not built"
[ -n "${CPU_APPS_PYTHON:-}" ] || skip "no CPU application environment (./setup.sh test makes it; PREWARM_CPU_APPS_PYTHON)"
"$CPU_APPS_PYTHON" -c 'import pytensor' 2> /dev/null || skip "$CPU_APPS_PYTHON cannot import pytensor"
command -v g++ > /dev/null || skip "no C++ compiler for PyTensor's C modules"
require_opencl_device # the build's cpu target runs where PoCL is
make_scratch pytensor-flags
app="$(cd "$(dirname "$0")" && pwd)/pytensor_app.py"
"$PREWARM" keygen --out "$SCRATCH/test_only_pt" > /dev/null 2>&1 || fail "keygen failed"

step "a cold run, in a compile directory of its own"
cold=$(PYTENSOR_FLAGS="base_compiledir=$SCRATCH/cold" "$CPU_APPS_PYTHON" "$app" 2> "$SCRATCH/cold.err") \
  || { cat "$SCRATCH/cold.err" >&2; fail "the cold run failed"; }
cold_result=$(grep '^result ' <<< "$cold") || fail "the cold run printed no result: $cold"

step "build: the flag merged into the model's PYTENSOR_FLAGS, the proof reuses every module"
cat > "$SCRATCH/m.yaml" <<YAML
version: 1
models:
  - name: pytensor-small
    command:
      argv: [$CPU_APPS_PYTHON, $app]
      env: {PYTENSOR_FLAGS: "floatX=float64"}
      kinds: []
      caches:
        - name: pytensor
          variable: PYTENSOR_FLAGS
          flag: "base_compiledir={dir}"
          separator: ","
      verify: require
targets: [cpu]
YAML
"$PREWARM" build "$SCRATCH/m.yaml" --key "$SCRATCH/test_only_pt.key" --out "$SCRATCH/b" --json "$SCRATCH/build.json" \
  > /dev/null 2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "build failed"; }
python3 - "$SCRATCH/build.json" <<'PY' || { cat "$SCRATCH/build.err" >&2; fail "the proof did not reuse every module"; }
import json, sys
report = json.load(open(sys.argv[1]))["jobs"][0]["report"]
k = [k for k in report["hit_proof"]["kinds"] if k["kind"] == "custom/pytensor"][0]
assert k["reused_files"] > 0 and k["new_files"] == 0, k
PY
"$PREWARM" inspect "$SCRATCH/b" > "$SCRATCH/inspect.txt"
grep -q 'cache    custom/pytensor located by the flag base_compiledir={dir} in \$PYTENSOR_FLAGS (comma-separated)' \
  "$SCRATCH/inspect.txt" || { cat "$SCRATCH/inspect.txt" >&2; fail "inspect does not show the flag"; }
"$PREWARM" inspect "$SCRATCH/b" --json > "$SCRATCH/inspect.json"
python3 - "$SCRATCH/inspect.json" <<'PY' || fail "the slice does not require what PyTensor's modules depend on"
import json, sys
slices = json.load(open(sys.argv[1]))["slices"]
assert len(slices) == 1, slices
keys = {r["key"] for r in slices[0]["requirements"]}
# C modules for this CPU, PyTensor's version, a compiledir named after the kernel release; no PoCL
assert {"cpu.arch", "framework.pytensor", "os.kernel-release"} <= keys, keys
assert not any(k.startswith("opencl.") for k in keys), keys
assert slices[0]["caches"] == [{"name": "pytensor", "variable": "PYTENSOR_FLAGS", "flag": "base_compiledir={dir}",
                                "separator": "comma"}], slices[0]["caches"]
PY

step "installed at another root: exec merges the flag into the caller's value and hits"
root="$SCRATCH/root"
"$PREWARM_RUNTIME" install "$SCRATCH/b" --trust "$SCRATCH/test_only_pt.pub" --root "$root" \
  > /dev/null 2> "$SCRATCH/install.err" || { cat "$SCRATCH/install.err" >&2; fail "install failed"; }
warm=$(PYTENSOR_FLAGS="floatX=float64,exception_verbosity=high,base_compiledir=$SCRATCH/elsewhere" \
  "$PREWARM_RUNTIME" exec --root "$root" --audit "$SCRATCH/audit.json" -- "$CPU_APPS_PYTHON" "$app" \
  2> "$SCRATCH/exec.err") || { cat "$SCRATCH/exec.err" >&2; fail "exec failed"; }
[ "$(grep '^result ' <<< "$warm")" = "$cold_result" ] || fail "the result differs from the cold run's: $warm / $cold_result"
grep -q '^exception_verbosity high$' <<< "$warm" || fail "the caller's exception_verbosity=high was lost: $warm"
grep -q "the application's PYTENSOR_FLAGS held base_compiledir=$SCRATCH/elsewhere, replaced" "$SCRATCH/exec.err" \
  || { cat "$SCRATCH/exec.err" >&2; fail "exec did not say it replaced the caller's base_compiledir"; }
[ ! -e "$SCRATCH/elsewhere" ] || fail "PyTensor compiled into the caller's own directory"
python3 - "$SCRATCH/audit.json" <<'PY' || { cat "$SCRATCH/exec.err" >&2; fail "exec --audit: not every module reused"; }
import json, sys
audit = json.load(open(sys.argv[1]))
for part in (audit, audit["this_run"]):
    k = [k for k in part["kinds"] if k["kind"] == "custom/pytensor"][0]
    assert k["reused_files"] > 0 and k["new_files"] == 0, k
PY

step "env prints the merged value"
"$PREWARM_RUNTIME" env --root "$root" > "$SCRATCH/env.sh" 2> "$SCRATCH/env.err" \
  || { cat "$SCRATCH/env.err" >&2; fail "env failed"; }
PYTENSOR_FLAGS="floatX=float32" "$PREWARM_RUNTIME" env --root "$root" > "$SCRATCH/env-merged.sh" 2> /dev/null
grep -q "^export PYTENSOR_FLAGS='floatX=float32,base_compiledir=.*/custom/pytensor'$" "$SCRATCH/env-merged.sh" \
  || { cat "$SCRATCH/env-merged.sh" >&2; fail "env does not merge the flag into the caller's value"; }

pass
