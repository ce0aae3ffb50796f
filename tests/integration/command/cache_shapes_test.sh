#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Application caches as they are (bundle_manifest.hpp: PATH, TARGET): a
# command whose own cache holds what darktable's and clFFT's do, a directory
# named after the device with spaces and parentheses, a UTF-8 name, and
# binaries found through relative symbolic links (one beside its target, one
# climbing a directory):
#   1. build: one job although the manifest lists two precisions (the command
#      never names {precision}); the proof reads through the links: 3 reused,
#      0 new; the manifest spells the names percent-encoded and lists the links;
#   2. inspect counts the links;
#   3. install: the installed tree has the same names and links;
#   4. exec --audit: the same output as the cold run, 3 reused, 0 new;
#   5. as nobody (a private copy of the signed files): the same output;
#   6. a cache holding an absolute link fails its job before the proof, with
#      the file and the rule, counted failed, no slice reported.
# No OpenCL program is built: about 3 s. Env: PREWARM, PREWARM_RUNTIME.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
[ -n "${PREWARM:-}" ] && [ -n "${PREWARM_RUNTIME:-}" ] || skip "prewarm or prewarm-runtime not built"
require_opencl_device # the cpu target runs on PoCL
make_scratch cache-shapes
chmod 755 "$SCRATCH"
"$PREWARM" keygen --out "$SCRATCH/test_only_shapes" > /dev/null 2>&1 || fail "keygen failed"

DEVICE='pthread-skylake-avx512-AMD EPYC (2 cores)'
UTF8='café 漢.bin'
cat > "$SCRATCH/app.sh" <<'APP'
#!/bin/sh
# Compiles (writes) its binaries on the first run, then finds them through
# its links; prints what it read, the same either way.
set -eu
c=$CLFFT_CACHE_PATH
dev="$c/pthread-skylake-avx512-AMD EPYC (2 cores)"
if [ ! -L "$c/blur.cl.bin" ]; then
  mkdir -p "$dev"
  echo compiled-blur > "$c/0123abcd"
  echo compiled-fft > "$dev/fft (1).bin"
  echo compiled-utf > "$c/café 漢.bin"
  ln -s 0123abcd "$c/blur.cl.bin"
  ln -s ../0123abcd "$dev/up.bin"
  echo "compiled" >&2
fi
echo "result: $(cat "$c/blur.cl.bin") $(cat "$dev/fft (1).bin") $(cat "$c/café 漢.bin") $(cat "$dev/up.bin")"
APP
chmod 755 "$SCRATCH/app.sh"

manifest() { # FILE ARGV
  cat > "$1" <<YAML
version: 1
models:
  - name: shapes
    command:
      argv: $2
      kinds: []
      caches: [{name: clfft, variable: CLFFT_CACHE_PATH}]
      verify: require
precisions: [fp32, fp16]
targets: [cpu]
YAML
}
manifest "$SCRATCH/m.yaml" "[$SCRATCH/app.sh]"

step "cold run"
cold=$(CLFFT_CACHE_PATH="$SCRATCH/cold" "$SCRATCH/app.sh" 2> /dev/null)
echo "$cold"

step "build: one job, the proof reads through the links"
"$PREWARM" build "$SCRATCH/m.yaml" --key "$SCRATCH/test_only_shapes.key" --out "$SCRATCH/b" --json "$SCRATCH/build.json" \
  > /dev/null 2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "build failed"; }
python3 - "$SCRATCH/build.json" <<'PY' || fail "the build report is not one job without a precision"
import json, sys
report = json.load(open(sys.argv[1]))
jobs = report["jobs"]
assert [j["id"] for j in jobs] == ["cpu/shapes"], jobs
assert jobs[0]["precision"] is None and jobs[0]["state"] == "ok", jobs[0]
assert len(jobs[0]["slices"]) == 1, jobs[0]
PY
grep -o "hit proof: custom/clfft: [0-9]* reused, [0-9]* new" "$SCRATCH/build.err" | grep -qx "hit proof: custom/clfft: 3 reused, 0 new" \
  || { cat "$SCRATCH/build.err" >&2; fail "the proof did not read the 3 files through the links and names"; }
enc_device='pthread-skylake-avx512-AMD%20EPYC%20%282%20cores%29'
grep -qx "link custom/clfft/blur.cl.bin 0123abcd" "$SCRATCH/b/manifest" || fail "no link line for blur.cl.bin"
grep -qx "link custom/clfft/$enc_device/up.bin ../0123abcd" "$SCRATCH/b/manifest" || fail "no link line for up.bin"
grep -q " custom/clfft/$enc_device/fft%20%281%29.bin$" "$SCRATCH/b/manifest" || fail "the device directory's file is not spelled percent-encoded"
grep -q " custom/clfft/caf%C3%A9%20%E6%BC%A2.bin$" "$SCRATCH/b/manifest" || fail "the UTF-8 name is not spelled percent-encoded"

step "inspect counts the links"
"$PREWARM" inspect "$SCRATCH/b" > "$SCRATCH/inspect.txt"
grep -q "kind     custom .* 3 files, .*, 2 links$" "$SCRATCH/inspect.txt" || { cat "$SCRATCH/inspect.txt" >&2; fail "inspect does not count 3 files and 2 links"; }

step "install: the same names and links"
ROOT="$SCRATCH/root"
"$PREWARM_RUNTIME" install "$SCRATCH/b" --trust "$SCRATCH/test_only_shapes.pub" --root "$ROOT" > /dev/null 2> "$SCRATCH/install.err" \
  || { cat "$SCRATCH/install.err" >&2; fail "install failed"; }
[ "$(readlink "$ROOT/custom/clfft/blur.cl.bin")" = 0123abcd ] || fail "blur.cl.bin is not the link to 0123abcd"
[ "$(readlink "$ROOT/custom/clfft/$DEVICE/up.bin")" = ../0123abcd ] || fail "up.bin is not the link to ../0123abcd"
[ "$(cat "$ROOT/custom/clfft/$DEVICE/fft (1).bin")" = compiled-fft ] || fail "the device directory's file is not installed"
[ "$(cat "$ROOT/custom/clfft/$UTF8")" = compiled-utf ] || fail "the UTF-8 name is not installed"
(cd "$SCRATCH/cold" && find . -printf '%p %y %l\n' | LC_ALL=C sort) > "$SCRATCH/cold.tree"
(cd "$ROOT/custom/clfft/" && find . -printf '%p %y %l\n' | LC_ALL=C sort) > "$SCRATCH/installed.tree"
diff "$SCRATCH/cold.tree" "$SCRATCH/installed.tree" || fail "the installed tree differs from the application's own (above)"

step "exec --audit: the cold run's output, nothing new"
out=$("$PREWARM_RUNTIME" exec --root "$ROOT" --audit "$SCRATCH/a.json" -- "$SCRATCH/app.sh" 2> "$SCRATCH/exec.err") \
  || { cat "$SCRATCH/exec.err" >&2; fail "the application failed under exec"; }
[ "$out" = "$cold" ] || fail "output through exec '$out' differs from the cold run's '$cold'"
! grep -q compiled "$SCRATCH/exec.err" || fail "the application compiled again through exec"
counts=$(python3 -c 'import json,sys; k=[k for k in json.load(open(sys.argv[1]))["kinds"] if k["kind"]=="custom/clfft"][0]; print(k["reused_files"], k["new_files"])' "$SCRATCH/a.json")
[ "$counts" = "3 0" ] || fail "exec --audit measured '$counts' (reused new), expected '3 0' as the proof said"

if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  step "as nobody: a private copy with the same links"
  mkdir -p "$SCRATCH/nobody-tmp" && chown 65534:65534 "$SCRATCH/nobody-tmp"
  out=$(setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$SCRATCH/nobody-tmp" \
          "$PREWARM_RUNTIME" exec --root "$ROOT" -- "$SCRATCH/app.sh" 2> "$SCRATCH/nobody.err") \
    || { cat "$SCRATCH/nobody.err" >&2; fail "the application failed as nobody"; }
  [ "$out" = "$cold" ] || { cat "$SCRATCH/nobody.err" >&2; fail "output as nobody '$out' differs from the cold run's"; }
  ! grep -q compiled "$SCRATCH/nobody.err" || fail "the application compiled again as nobody"
fi

step "an absolute link: the job fails before its proof, naming file and rule"
cat > "$SCRATCH/bad.sh" <<'APP'
#!/bin/sh
echo b > "$CLFFT_CACHE_PATH/0123abcd" && ln -s /etc/passwd "$CLFFT_CACHE_PATH/outside"
APP
chmod 755 "$SCRATCH/bad.sh"
manifest "$SCRATCH/bad.yaml" "[$SCRATCH/bad.sh]"
rc=0
"$PREWARM" build "$SCRATCH/bad.yaml" --key "$SCRATCH/test_only_shapes.key" --out "$SCRATCH/bad" --keep-going --json "$SCRATCH/bad.json" \
  > /dev/null 2> "$SCRATCH/bad.err" || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/bad.err" >&2; fail "build exit $rc, expected 1"; }
grep -qF 'custom cache clfft: "outside" is a symbolic link to "/etc/passwd" that no slice can carry: absolute target' "$SCRATCH/bad.err" \
  || { cat "$SCRATCH/bad.err" >&2; fail "the refusal does not name the file and the rule"; }
! grep -q "hit proof:" "$SCRATCH/bad.err" || fail "a proof ran for what cannot ship"
python3 - "$SCRATCH/bad.json" <<'PY' || fail "the report does not count the job failed without slices"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["failed"] == 1, report
assert all(not j["slices"] for j in report["jobs"]), report["jobs"]
PY
[ ! -e "$SCRATCH/bad" ] || fail "a bundle was written"
pass
