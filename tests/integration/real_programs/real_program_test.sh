#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real OpenCL program this project did not write, bundled on PoCL:
#   real_program_test.sh clpeak|clblast|clblast-layer|pyopencl|hashcat|hashcat-layer|clfft
# Each case: `prewarm build` of a command workload (kinds: pocl) and its hit
# proof line ("pocl: N reused, 0 new", or a miss with its cause), install,
# `prewarm-runtime exec --audit` of the application (what it reused and what
# it compiled anew), and where the program allows, an audit of a
# deliberately incomplete warm-up naming what was missed:
#   clpeak    --kernel-latency: hit proof (verify: require), exec --audit all
#             reused, the proof's counts equal the audit's
#   clblast   warm-up GEMM only (verify: require: hits), then the application
#             runs GEMM + AXPY under exec --audit: the audit names the AXPY
#             program PoCL compiled anew
#   pyopencl  with pyopencl's own cache on (its default): verify: require
#             fails, naming the changing source and PYOPENCL_NO_CACHE=1;
#             with PYOPENCL_NO_CACHE=1: hits, and exec --audit all reused,
#             the proof's counts equal the audit's
#   hashcat   (slow) its kernel cache under $XDG_CACHE_HOME/hashcat is no
#             captured kind: the hit proof names it as not captured
#   hashcat-layer  kinds [programs]: hashcat's compile + link recorded by
#             the layer; hit proof and exec --audit serve both stages
#             (deferred compile), nothing built, hashcat cracks the hash and
#             PoCL compiles nothing at exec
#   clblast-layer  kinds [programs]: the OpenCL layer records CLBlast's GEMM
#             program (CLBlast reads the program's binary right after the
#             build, which freezes PoCL's serialisation); the hit proof and
#             exec --audit serve it with nothing built, and PoCL compiles
#             nothing at exec: every work-group function in its (empty)
#             cache afterwards came out of the stored binary, including the
#             ones generated at the first enqueue
#   clfft     clFFT's client with its own cache (CLFFT_CACHE_PATH: a
#             directory named after the device, with spaces and
#             parentheses) as a custom cache: verify: require, installed at
#             another path, exec --audit reuses both caches, compiles
#             nothing, the proof's counts equal the audit's, the client's
#             check passes
# Timings (cold vs exec vs warm vs the layer) are bench/run --only third_party,
# not here. Env: PREWARM, PREWARM_RUNTIME, EXAMPLES, CLBLAST_CLIENT.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
program=${1:?usage: real_program_test.sh clpeak|clblast|clblast-layer|pyopencl|hashcat|hashcat-layer|clfft}
[ -n "${PREWARM:-}" ] && [ -n "${PREWARM_RUNTIME:-}" ] || skip "prewarm or prewarm-runtime not built"
require_opencl_device
make_scratch "real-$program"
PYTHON=/usr/bin/python3
"$PREWARM" keygen --out "$SCRATCH/test_only_real" > /dev/null 2>&1 || fail "keygen failed"

# build NAME VERIFY ENV_YAML ARGV_YAML [KINDS]: a bundle in
# $SCRATCH/NAME.bundle; the build's stderr in $SCRATCH/NAME.err, its --json
# report in NAME.json. Returns the build's exit status.
build() {
  local name=$1 verify=$2 env=$3 argv=$4 kinds=${5:-pocl}
  cat > "$SCRATCH/$name.yaml" <<YAML
version: 1
models:
  - name: $name
    command:
      argv: $argv
      env: $env
      timeout: 10m
      kinds: [$kinds]
      verify: $verify
precisions: [fp32]
targets: [cpu]
YAML
  local rc=0
  "$PREWARM" build "$SCRATCH/$name.yaml" --key "$SCRATCH/test_only_real.key" --out "$SCRATCH/$name.bundle" \
    --json "$SCRATCH/$name.json" > "$SCRATCH/$name.out" 2> "$SCRATCH/$name.err" || rc=$?
  grep -h "hit proof" "$SCRATCH/$name.out" "$SCRATCH/$name.err" || true
  return $rc
}
# The "pocl: N reused, M new" part of the job line.
proof_counts() { grep -ho "hit proof[A-Z ]*: pocl: [0-9?]* reused, [0-9]* new" "$SCRATCH/$1.out" "$SCRATCH/$1.err" | head -1; }
# The proof is a prediction of the application's next start: its counts are
# the audit's on a fresh install (same user, same environment).
expect_proof_equals_audit() {
  local line reused new
  line=$(proof_counts "$1")
  [[ "$line" =~ pocl:\ ([0-9]+)\ reused,\ ([0-9]+)\ new ]] || fail "$1: no proof counts (got '$line')"
  reused=$(audit_field "$SCRATCH/$1.audit.json" pocl reused_files)
  new=$(audit_field "$SCRATCH/$1.audit.json" pocl new_files)
  [ "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}" = "$reused $new" ] \
    || fail "$1: the proof said ${BASH_REMATCH[1]} reused, ${BASH_REMATCH[2]} new; exec --audit measured $reused reused, $new new"
  echo "$1: proof = audit: $reused reused, $new new"
}
expect_hit() {
  local line; line=$(proof_counts "$1")
  [[ "$line" =~ pocl:\ ([0-9]+)\ reused,\ 0\ new ]] || { cat "$SCRATCH/$1.err" >&2; fail "$1: no hit proof 'pocl: N reused, 0 new' (got '$line')"; }
  [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "$1: hit proof reused nothing"
  echo "$1: $line"
}
install_root() {
  "$PREWARM_RUNTIME" install "$SCRATCH/$1.bundle" --trust "$SCRATCH/test_only_real.pub" --root "$SCRATCH/$1.root" \
    > /dev/null 2> "$SCRATCH/$1.install.err" || { cat "$SCRATCH/$1.install.err" >&2; fail "$1: install failed"; }
}
# audit_field FILE KIND FIELD: a number from the audit JSON.
new_entry_names() {
  "$PYTHON" -c 'import json,sys; a=json.load(open(sys.argv[1])); print("\n".join(e["name"] for k in a["kinds"] if k["kind"]=="pocl" for e in k["new_entries"]))' "$1"
}
# exec_audit NAME CMD...: the application under exec --audit on the installed root.
exec_audit() {
  local name=$1; shift
  "$PREWARM_RUNTIME" exec --root "$SCRATCH/$name.root" --audit "$SCRATCH/$name.audit.json" -- "$@" \
    > "$SCRATCH/$name.app.out" 2> "$SCRATCH/$name.app.err" || { cat "$SCRATCH/$name.app.err" >&2; fail "$name: the application failed under exec --audit"; }
  grep "audit: pocl:" "$SCRATCH/$name.app.err" || { cat "$SCRATCH/$name.app.err" >&2; fail "$name: no audit summary line on stderr"; }
}
expect_audit_all_reused() {
  local new reused
  new=$(audit_field "$SCRATCH/$1.audit.json" pocl new_files)
  reused=$(audit_field "$SCRATCH/$1.audit.json" pocl reused_files)
  [ "$new" -eq 0 ] || { new_entry_names "$SCRATCH/$1.audit.json" >&2; fail "$1: the application compiled $new files anew"; }
  [ "$reused" -gt 0 ] || fail "$1: the audit measured no reuse"
}

# proof_served NAME: the hit proof of a kinds [programs] build served every
# program it recorded: "programs: N reused, 0 new, M programs served, 0 built".
proof_served() {
  local proof
  proof=$(grep -ho "hit proof[A-Z ]*: programs: [0-9]* reused, [0-9]* new, [0-9]* programs served, [0-9]* built" \
    "$SCRATCH/$1.out" "$SCRATCH/$1.err" | head -1)
  [[ "$proof" =~ programs:\ ([0-9]+)\ reused,\ 0\ new,\ ([0-9]+)\ programs\ served,\ 0\ built ]] \
    || { cat "$SCRATCH/$1.err" >&2; fail "$1: hit proof: expected 'programs: N reused, 0 new, M programs served, 0 built', got '$proof'"; }
  [ "${BASH_REMATCH[2]}" -gt 0 ] || fail "$1: hit proof: nothing served ($proof)"
  echo "$1: $proof"
}
# expect_layer_served NAME: exec --audit (with the layer's audit log) served
# programs and built none.
expect_layer_served() {
  [ "$(audit_field "$SCRATCH/$1.audit.json" programs layer_misses)" -eq 0 ] || fail "$1: exec built a program the build recorded"
  [ "$(audit_field "$SCRATCH/$1.audit.json" programs layer_hits)" -gt 0 ] || fail "$1: exec served nothing"
}
# pocl_compiled_nothing CACHE STORE: PoCL unpacks a served binary into its
# cache and compiles there only what the binary lacks: a work-group function
# in CACHE that no stored record names was compiled at exec (the capture
# missed code PoCL generates at the first enqueue).
pocl_compiled_nothing() {
  "$PYTHON" - "$1" "$2" <<'PY' || fail "PoCL compiled work-group functions at exec that the stored binaries lack"
import pathlib, sys
cache, store = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
records = b"".join(p.read_bytes() for p in store.rglob("*.bin"))
functions = [str(p.relative_to(p.parents[2])) for p in cache.rglob("*.so")]
compiled = [f for f in functions if f.encode() not in records]
print(f"{len(functions)} work-group functions in PoCL's cache after exec, {len(compiled)} not from a stored binary")
for path in compiled:
    print(f"  compiled at exec: {path}", file=sys.stderr)
sys.exit(1 if compiled or not functions else 0)
PY
}

case "$program" in
clpeak)
  command -v clpeak > /dev/null || skip "clpeak not installed"
  step "clpeak --kernel-latency: build with verify: require"
  build clpeak require '{}' '[clpeak, -p, "0", -d, "0", --kernel-latency]' || { cat "$SCRATCH/clpeak.err" >&2; fail "build failed"; }
  expect_hit clpeak
  step "install, exec --audit"
  install_root clpeak
  exec_audit clpeak clpeak -p 0 -d 0 --kernel-latency
  grep -qi "latency" "$SCRATCH/clpeak.app.out" || fail "clpeak ran no latency test under exec"
  expect_audit_all_reused clpeak
  expect_proof_equals_audit clpeak
  ;;
clblast)
  [ -n "${CLBLAST_CLIENT:-}" ] || skip "libclblast-dev not found at configure time"
  step "CLBlast warm-up (GEMM only): build with verify: require"
  build clblast require '{}' "[$CLBLAST_CLIENT, gemm]" || { cat "$SCRATCH/clblast.err" >&2; fail "build failed"; }
  expect_hit clblast
  install_root clblast
  step "the application runs GEMM and AXPY: the audit names what the warm-up missed"
  exec_audit clblast "$CLBLAST_CLIENT" gemm axpy
  new=$(audit_field "$SCRATCH/clblast.audit.json" pocl new_files)
  reused=$(audit_field "$SCRATCH/clblast.audit.json" pocl reused_files)
  [ "$new" -gt 0 ] || fail "an AXPY the warm-up never ran compiled nothing anew?"
  [ "$reused" -gt 0 ] || fail "the GEMM the warm-up ran was not reused"
  new_entry_names "$SCRATCH/clblast.audit.json" | tee "$SCRATCH/clblast.new"
  grep -qi "axpy" "$SCRATCH/clblast.new" || fail "the audit does not name the AXPY kernels"
  ! grep -qi "gemm" "$SCRATCH/clblast.new" || fail "the audit calls GEMM new although the warm-up ran it"
  ;;
clblast-layer)
  [ -n "${CLBLAST_CLIENT:-}" ] || skip "libclblast-dev not found at configure time"
  step "CLBlast GEMM recorded by the OpenCL layer (kinds: [programs])"
  build clblast-layer require '{}' "[$CLBLAST_CLIENT, gemm]" programs || { cat "$SCRATCH/clblast-layer.err" >&2; fail "build failed"; }
  proof_served clblast-layer
  install_root clblast-layer
  step "exec --audit over an empty PoCL cache: served, nothing built, nothing compiled by PoCL"
  mkdir "$SCRATCH/pocl-exec"
  # exec --audit joins the layer's events when the layer writes them
  # (PREWARM_LAYER_AUDIT_LOG, as an operator sets it).
  POCL_CACHE_DIR="$SCRATCH/pocl-exec" PREWARM_LAYER_AUDIT_LOG="$SCRATCH/clblast-layer.layer.jsonl" "$PREWARM_RUNTIME" exec --root "$SCRATCH/clblast-layer.root" --audit "$SCRATCH/clblast-layer.audit.json" \
    -- "$CLBLAST_CLIENT" gemm > "$SCRATCH/clblast-layer.app.out" 2> "$SCRATCH/clblast-layer.app.err" \
    || { cat "$SCRATCH/clblast-layer.app.err" >&2; fail "the application failed under exec --audit"; }
  grep "audit: programs:" "$SCRATCH/clblast-layer.app.err" || { cat "$SCRATCH/clblast-layer.app.err" >&2; fail "no audit summary line"; }
  expect_layer_served clblast-layer
  pocl_compiled_nothing "$SCRATCH/pocl-exec" "$SCRATCH/clblast-layer.root/programs"
  ;;
pyopencl)
  "$PYTHON" -c "import pyopencl" 2>/dev/null || skip "python3-pyopencl not installed for $PYTHON"
  script="$EXAMPLES/pyopencl_warmup.py"
  step "pyopencl with its own cache on (default): verify: require fails with the cause"
  if build pyopencl-default require '{PYOPENCL_CTX: "0"}' "[$PYTHON, $script]"; then
    fail "a pyopencl build with its own cache on passed verify: require"
  fi
  # PoCL keeps no source in its cache: the recompiled kernels are named, the
  # cause is not guessed, the known case and its fix are.
  grep -q "compiled kernels again (.*) that the capture holds under other keys; cause unknown" "$SCRATCH/pyopencl-default.err" \
    || { cat "$SCRATCH/pyopencl-default.err" >&2; fail "the kernels compiled again under new keys are not named"; }
  grep -q "PYOPENCL_NO_CACHE=1" "$SCRATCH/pyopencl-default.err" || fail "the fix is not named"
  grep -q "XDG_CACHE_HOME/pyopencl" "$SCRATCH/pyopencl-default.err" || fail "pyopencl's own cache is not named as not captured"
  step "with PYOPENCL_NO_CACHE=1: hits"
  build pyopencl require '{PYOPENCL_CTX: "0", PYOPENCL_NO_CACHE: "1"}' "[$PYTHON, $script]" \
    || { cat "$SCRATCH/pyopencl.err" >&2; fail "build failed"; }
  expect_hit pyopencl
  install_root pyopencl
  PYOPENCL_CTX=0 PYOPENCL_NO_CACHE=1 exec_audit pyopencl "$PYTHON" "$script"
  expect_audit_all_reused pyopencl
  expect_proof_equals_audit pyopencl
  ;;
hashcat-layer)
  command -v hashcat > /dev/null || skip "hashcat not installed"
  # MD5 of "abc", found by a one-word dictionary: hashcat compiles its
  # shared program and the attack's with clCompileProgram + clLinkProgram
  # (its own kernel cache is in the private home of each build run, and
  # fresh at exec below).
  printf 'abc\n' > "$SCRATCH/words.txt"
  hashcat_argv=(hashcat -m 0 -a 0 --force --potfile-disable -O --quiet -D 1 900150983cd24fb0d6963f7d28e17f72 "$SCRATCH/words.txt")
  step "hashcat recorded by the OpenCL layer (kinds: [programs]): compile + link"
  argv_yaml=$(printf '"%s", ' "${hashcat_argv[@]}")
  build hashcat-layer require '{}' "[${argv_yaml%, }]" programs \
    || { cat "$SCRATCH/hashcat-layer.err" >&2; fail "build failed"; }
  proof_served hashcat-layer
  install_root hashcat-layer
  step "exec --audit, hashcat's own cache and PoCL's empty: compile and link served"
  mkdir "$SCRATCH/pocl-exec" "$SCRATCH/xdg-cache" "$SCRATCH/xdg-data"
  POCL_CACHE_DIR="$SCRATCH/pocl-exec" XDG_CACHE_HOME="$SCRATCH/xdg-cache" XDG_DATA_HOME="$SCRATCH/xdg-data" \
    PREWARM_LAYER_AUDIT_LOG="$SCRATCH/hashcat-layer.layer.jsonl" \
    "$PREWARM_RUNTIME" exec --root "$SCRATCH/hashcat-layer.root" --audit "$SCRATCH/hashcat-layer.audit.json" -- "${hashcat_argv[@]}" \
    > "$SCRATCH/hashcat-layer.app.out" 2> "$SCRATCH/hashcat-layer.app.err" \
    || { cat "$SCRATCH/hashcat-layer.app.err" >&2; fail "hashcat failed under exec --audit"; }
  grep -q "^900150983cd24fb0d6963f7d28e17f72:abc$" "$SCRATCH/hashcat-layer.app.out" || fail "hashcat did not crack the hash"
  grep "audit: programs:" "$SCRATCH/hashcat-layer.app.err" || { cat "$SCRATCH/hashcat-layer.app.err" >&2; fail "no audit summary line"; }
  expect_layer_served hashcat-layer
  for stage in compile link; do
    grep -q "\"event\":\"hit\".*\"stage\":\"$stage\"" "$SCRATCH/hashcat-layer.layer.jsonl" \
      || { cat "$SCRATCH/hashcat-layer.layer.jsonl" >&2; fail "no $stage served"; }
  done
  ls "$SCRATCH/xdg-cache/hashcat/kernels/"*.kernel > /dev/null || fail "hashcat wrote no kernel cache from the served programs"
  pocl_compiled_nothing "$SCRATCH/pocl-exec" "$SCRATCH/hashcat-layer.root/programs"
  ;;
clfft)
  command -v clFFT-client > /dev/null || skip "clfft-client not installed"
  # clFFT keeps the kernels it generates in its own cache, CLFFT_CACHE_PATH,
  # under a directory named after the device: spaces and parentheses
  # ("pthread-skylake-avx512-Intel(R) Xeon(R) Processor").
  clfft_argv=(clFFT-client -c -x 1024 -y 64 -p 1)
  step "clFFT's client with its own cache (custom, CLFFT_CACHE_PATH) and PoCL's: build with verify: require"
  cat > "$SCRATCH/clfft.yaml" <<YAML
version: 1
models:
  - name: clfft
    command:
      argv: [clFFT-client, -c, -x, "1024", -y, "64", -p, "1"]
      caches:
        - name: clfft
          variable: CLFFT_CACHE_PATH
      kinds: [pocl]
      verify: require
      timeout: 10m
precisions: [fp32]
targets: [cpu]
YAML
  "$PREWARM" build "$SCRATCH/clfft.yaml" --key "$SCRATCH/test_only_real.key" --out "$SCRATCH/clfft.bundle" \
    --json "$SCRATCH/clfft.json" > "$SCRATCH/clfft.out" 2> "$SCRATCH/clfft.err" || { cat "$SCRATCH/clfft.err" >&2; fail "build failed"; }
  proof=$(grep -ho "hit proof[A-Z ]*: custom/clfft: [0-9]* reused, [0-9]* new; pocl: [0-9]* reused, [0-9]* new" "$SCRATCH/clfft.out" "$SCRATCH/clfft.err" | head -1)
  [[ "$proof" =~ custom/clfft:\ ([0-9]+)\ reused,\ 0\ new\;\ pocl:\ ([0-9]+)\ reused,\ 0\ new ]] \
    || { cat "$SCRATCH/clfft.err" >&2; fail "no hit proof 'custom/clfft: N reused, 0 new; pocl: M reused, 0 new' (got '$proof')"; }
  [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "the proof reused nothing of clFFT's own cache"
  echo "clfft: $proof"
  install_root clfft
  step "exec --audit on a fresh install at another path: the proof's counts, and the client's check passes"
  "$PREWARM_RUNTIME" exec --root "$SCRATCH/clfft.root" --audit "$SCRATCH/clfft.audit.json" -- "${clfft_argv[@]}" \
    > "$SCRATCH/clfft.app.out" 2> "$SCRATCH/clfft.app.err" || { cat "$SCRATCH/clfft.app.err" >&2; fail "clFFT failed under exec --audit"; }
  grep -q "Client Test \*\*\*\*\*PASS\*\*\*\*\*" "$SCRATCH/clfft.app.out" || fail "the client's check did not pass under exec"
  grep "audit:" "$SCRATCH/clfft.app.err"
  for kind in custom/clfft pocl; do
    reused=$(audit_field "$SCRATCH/clfft.audit.json" "$kind" reused_files)
    new=$(audit_field "$SCRATCH/clfft.audit.json" "$kind" new_files)
    [ "$new" = 0 ] || fail "$kind: the application compiled $new files anew"
    [[ "$proof" =~ $kind:\ $reused\ reused ]] || fail "$kind: exec --audit measured $reused reused; the proof said '$proof'"
  done
  echo "clfft: proof = audit"
  ;;
hashcat)
  command -v hashcat > /dev/null || skip "hashcat not installed"
  # MD5 of "42", found by a 2-digit mask: hashcat builds its kernels first.
  step "hashcat: its own kernel cache is not a captured kind"
  build hashcat warn '{}' '[hashcat, -m, "0", -a, "3", --force, --potfile-disable, --quiet, -D, "1", a1d0c6e83f027327d8461063f4ac58a6, "?d?d"]' \
    || { cat "$SCRATCH/hashcat.err" >&2; fail "build failed"; }
  grep -q 'XDG_CACHE_HOME/hashcat' "$SCRATCH/hashcat.err" || { cat "$SCRATCH/hashcat.err" >&2; fail "hashcat's own cache is not named"; }
  proof_counts hashcat
  ;;
*) fail "unknown program $program" ;;
esac
pass
