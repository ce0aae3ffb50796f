#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The pycache kind: Python bytecode captured under PYTHONPYCACHEPREFIX.
#   1. `prewarm build` of a command workload (python3 app/main.py, which
#      imports stdlib modules and a local one) with kinds [pycache], under
#      PYTHONDONTWRITEBYTECODE=1 as images set it: the capture drops it, the
#      hit proof reuses every .pyc;
#   2. install under another root -> `exec --audit` (still with
#      PYTHONDONTWRITEBYTECODE=1): bytecode reused, nothing new, same output;
#   3. the local module's source changed after the build: Python sees it
#      (mtime and size) and compiles it again: the new behaviour is printed.
# Env: PREWARM, PREWARM_RUNTIME. Cost: five short python3 processes (~5 s).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
PYTHON=$(command -v python3 || true)
[ -n "$PYTHON" ] || skip "no python3"
make_scratch pycache
unset PYTHONPYCACHEPREFIX
export HOME="$SCRATCH/home" XDG_CACHE_HOME="$SCRATCH/home/.cache" PYTHONDONTWRITEBYTECODE=1
mkdir -p "$HOME" "$SCRATCH/app"
cat > "$SCRATCH/app/helper.py" <<'PY'
VALUE = 1
def describe():
    return f"helper {VALUE}"
PY
cat > "$SCRATCH/app/main.py" <<'PY'
import decimal, email.parser, fractions, json, statistics, sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
import helper
print(helper.describe(), json.dumps({"mean": statistics.mean([1, 2, 3])}), fractions.Fraction(1, 3), decimal.Decimal("1.5"))
PY
expected=$("$PYTHON" "$SCRATCH/app/main.py")
[ -z "$(find "$SCRATCH/app" -name '*.pyc')" ] || fail "PYTHONDONTWRITEBYTECODE=1 wrote bytecode beside the source"

step "prewarm build: kind pycache captured, signed, proven"
"$PREWARM" keygen --out "$SCRATCH/test_only_pyc" > /dev/null 2>&1 || fail "keygen failed"
cat > "$SCRATCH/manifest.yaml" <<YAML
version: 1
models:
  - name: small-python
    command:
      argv: [$PYTHON, $SCRATCH/app/main.py]
      env: {PYTHONDONTWRITEBYTECODE: "1"}
      kinds: [pycache]
precisions: [fp32]
targets: [cpu]
YAML
"$PREWARM" build "$SCRATCH/manifest.yaml" --key "$SCRATCH/test_only_pyc.key" --out "$SCRATCH/bundle" \
  > /dev/null 2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "prewarm build failed"; }
grep -E "hit proof: pycache: [0-9]+ reused, 0 new" "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "the hit proof found new pycache entries"; }
grep -q "PYTHONDONTWRITEBYTECODE" "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "the build did not say it dropped PYTHONDONTWRITEBYTECODE"; }
[ -z "$(find "$SCRATCH/app" -name '*.pyc')" ] || fail "the capture wrote bytecode beside the source"
"$PREWARM" inspect "$SCRATCH/bundle" --trust "$SCRATCH/test_only_pyc.pub" > "$SCRATCH/inspect.txt"
grep -q "framework.python" "$SCRATCH/inspect.txt" || { cat "$SCRATCH/inspect.txt" >&2; fail "the slice does not require the Python version"; }

step "install -> exec --audit: bytecode reused, nothing compiled, same output"
"$PREWARM_RUNTIME" install "$SCRATCH/bundle" --trust "$SCRATCH/test_only_pyc.pub" --root "$SCRATCH/root" \
  > /dev/null 2> "$SCRATCH/install.err" || { cat "$SCRATCH/install.err" >&2; fail "install failed"; }
find -L "$SCRATCH/root/pycache" -name "helper.*.pyc" | grep -q . || { find "$SCRATCH/root" -maxdepth 3 | head >&2; cat "$SCRATCH/install.err" >&2; fail "the local module bytecode is not installed"; }
"$PREWARM_RUNTIME" env --root "$SCRATCH/root" | grep -q "PYTHONPYCACHEPREFIX=.*pycache" || fail "env does not export PYTHONPYCACHEPREFIX"
"$PREWARM_RUNTIME" exec --root "$SCRATCH/root" --audit "$SCRATCH/exec.audit.json" -- "$PYTHON" "$SCRATCH/app/main.py" \
  > "$SCRATCH/installed.out" 2> "$SCRATCH/installed.err" || { cat "$SCRATCH/installed.err" >&2; fail "exec failed"; }
grep "audit:" "$SCRATCH/installed.err" || true
[ "$(cat "$SCRATCH/installed.out")" = "$expected" ] || fail "output differs through the bundle: $(cat "$SCRATCH/installed.out")"
reused=$(audit_field "$SCRATCH/exec.audit.json" pycache reused_files)
[ "$reused" -ge 5 ] || fail "only $reused .pyc reused"
[ "$(audit_field "$SCRATCH/exec.audit.json" pycache new_files)" -eq 0 ] || fail "pycache compiled anew under the root"

step "the source changed after the build: compiled again, never the old bytecode"
sleep 1 # a new modification time even on coarse clocks
cat > "$SCRATCH/app/helper.py" <<'PY'
VALUE = 2
def describe():
    return f"helper {VALUE} (changed)"
PY
"$PREWARM_RUNTIME" exec --root "$SCRATCH/root" -- "$PYTHON" "$SCRATCH/app/main.py" > "$SCRATCH/changed.out" 2> "$SCRATCH/changed.err" \
  || { cat "$SCRATCH/changed.err" >&2; fail "exec of the changed program failed"; }
grep -q "^helper 2 (changed)" "$SCRATCH/changed.out" || fail "the old bytecode ran: $(cat "$SCRATCH/changed.out")"
pass
