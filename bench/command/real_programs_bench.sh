#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real OpenCL programs on PoCL: cold vs through `prewarm-runtime exec` vs
# fully warm, medians of RUNS fresh processes each, side by side.
#   bench/command/real_programs_bench.sh BUILD_DIR [clpeak clblast pyopencl hashcat]
#   cold   empty POCL_CACHE_DIR, empty XDG_CACHE_HOME (program caches too)
#   exec   a fresh copy of the installed root (prewarm build -> install),
#          the program run through `prewarm-runtime exec`; XDG_CACHE_HOME empty
#   warm   the caches the last cold run filled (PoCL's and the program's own),
#          used again in place
# The hit proof line of each build is printed too. Writes a Markdown table on
# stdout (bench/command/results/real_programs.md holds a run and its command).
# Env: RUNS (default 5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-$repo/build}; shift || true
programs=${*:-clpeak clblast pyopencl}
RUNS=${RUNS:-5}
PREWARM=$build/prewarm/cli/prewarm
RUNTIME=$build/runtime/cli/prewarm-runtime
CLBLAST=$build/tests/integration/real_programs/clblast_client
PYTHON=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-real-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$PREWARM" keygen --out "$work/test_only_bench" > /dev/null 2>&1

argv_of() {
  case "$1" in
  clpeak) echo "clpeak -p 0 -d 0 --kernel-latency" ;;
  clblast) echo "$CLBLAST gemm" ;;
  pyopencl) echo "$PYTHON $repo/manifests/examples/pyopencl_warmup.py" ;;
  hashcat) echo "hashcat -m 0 -a 3 --force --potfile-disable --quiet -D 1 a1d0c6e83f027327d8461063f4ac58a6 ?d?d" ;;
  esac
}
yaml_list() { local out="" w; for w in "$@"; do out+="${out:+, }\"$w\""; done; echo "[$out]"; }
now() { date +%s.%N; }
median() { "$PYTHON" -c 'import statistics,sys; print(f"{statistics.median(map(float, sys.argv[1:])):.2f}")' "$@"; }

echo "| program | cold s | exec s | warm s | cold/exec | hit proof |"
echo "|---|---|---|---|---|---|"
for p in $programs; do
  read -r -a cmd <<< "$(argv_of "$p")"
  export PYOPENCL_CTX=0 PYOPENCL_NO_CACHE=1
  cat > "$work/$p.yaml" <<YAML
version: 1
models:
  - name: $p
    command:
      argv: $(yaml_list "${cmd[@]}")
      env: {PYOPENCL_CTX: "0", PYOPENCL_NO_CACHE: "1"}
      kinds: [pocl]
      verify: warn
precisions: [fp32]
targets: [cpu]
YAML
  "$PREWARM" build "$work/$p.yaml" --key "$work/test_only_bench.key" --out "$work/$p.bundle" > "$work/$p.build.out" 2>&1
  proof=$(grep -o "hit proof[^;]*: pocl: [0-9?]* reused, [0-9]* new" "$work/$p.build.out" | head -1 || true)
  "$RUNTIME" install "$work/$p.bundle" --trust "$work/test_only_bench.pub" --root "$work/$p.root" > /dev/null 2>&1
  cold=() ; via=() ; warm=()
  for i in $(seq 1 "$RUNS"); do
    rm -rf "$work/cold" && mkdir -p "$work/cold/pocl" "$work/cold/xdg"
    t=$(now); POCL_CACHE_DIR="$work/cold/pocl" XDG_CACHE_HOME="$work/cold/xdg" "${cmd[@]}" > /dev/null 2>&1
    cold+=("$("$PYTHON" -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t" "$(now)")")
    t=$(now); POCL_CACHE_DIR="$work/cold/pocl" XDG_CACHE_HOME="$work/cold/xdg" "${cmd[@]}" > /dev/null 2>&1
    warm+=("$("$PYTHON" -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t" "$(now)")")
    rm -rf "$work/root" "$work/xdg" && cp -a "$work/$p.root" "$work/root" && mkdir -p "$work/xdg"
    t=$(now); XDG_CACHE_HOME="$work/xdg" "$RUNTIME" exec --root "$work/root" -- "${cmd[@]}" > /dev/null 2>&1
    via+=("$("$PYTHON" -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t" "$(now)")")
  done
  c=$(median "${cold[@]}"); e=$(median "${via[@]}"); w=$(median "${warm[@]}")
  echo "| $p | $c | $e | $w | $("$PYTHON" -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.1f}x')" "$c" "$e") | ${proof:-none} |"
done
