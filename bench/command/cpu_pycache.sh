#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the CPU: `import torch` plus a tiny torch.compile (Inductor's C++
# backend), with PYTHONDONTWRITEBYTECODE=1 and no bytecode to read (an empty
# PYTHONPYCACHEPREFIX stands for an image without __pycache__), cold vs
# through a bundle of kind pycache. Inductor's cache is filled once and shared
# by both, so the difference is Python's compilation of what is imported.
# Env: PYTHON (torch venv), PREWARM, PREWARM_RUNTIME, RUNS (3), OUT (out/cpu_pycache).
set -euo pipefail
: "${PYTHON:?}" "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
RUNS=${RUNS:-3}
OUT=${OUT:-out/cpu_pycache}
mkdir -p "$OUT"
work=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-cpu-pycache.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat > "$work/tiny.py" <<'PY'
import time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
f = torch.compile(lambda x: torch.sin(x) * 2 + x)
y = f(torch.ones(8))
t2 = time.perf_counter()
assert torch.allclose(y, torch.sin(torch.ones(8)) * 2 + 1)
print(f'{{"import_torch_s": {t1 - t0:.3f}, "first_compiled_call_s": {t2 - t1:.3f}, "total_s": {t2 - t0:.3f}}}')
PY
export TORCHINDUCTOR_CACHE_DIR="$work/inductor" PYTHONDONTWRITEBYTECODE=1
unset PYTHONPYCACHEPREFIX
"$PYTHON" "$work/tiny.py" > /dev/null # fills Inductor's cache (and its own bytecode nowhere)
"$PREWARM" keygen --out "$work/k" > /dev/null 2>&1
cat > "$work/m.yaml" <<YAML
version: 1
models:
  - name: tiny
    command:
      argv: [$PYTHON, $work/tiny.py]
      env: {PYTHONDONTWRITEBYTECODE: "1", TORCHINDUCTOR_CACHE_DIR: "$work/inductor"}
      kinds: [pycache]
precisions: [fp32]
targets: [cpu]
YAML
"$PREWARM" build "$work/m.yaml" --key "$work/k.key" --out "$work/bundle" > /dev/null 2> "$OUT/build.err"
grep -o "hit proof: [^;]*" "$OUT/build.err" | sort -u
"$PREWARM_RUNTIME" install "$work/bundle" --trust "$work/k.pub" --root "$work/root" > /dev/null 2>&1
echo "pycache installed: $(find -L "$work/root/pycache" -name '*.pyc' | wc -l) files, $(du -shL "$work/root/pycache" | cut -f1)"
for i in $(seq 1 "$RUNS"); do
  rm -rf "$work/empty"; mkdir "$work/empty"
  echo "cold $i $(PYTHONPYCACHEPREFIX="$work/empty" "$PYTHON" "$work/tiny.py")" | tee -a "$OUT/samples.txt"
  echo "bundle $i $("$PREWARM_RUNTIME" exec --root "$work/root" --audit "$OUT/audit-$i.json" -- "$PYTHON" "$work/tiny.py" 2> "$OUT/exec-$i.err")" | tee -a "$OUT/samples.txt"
  grep -o "pycache: [^;]*" "$OUT/exec-$i.err" | head -1 || true
done
