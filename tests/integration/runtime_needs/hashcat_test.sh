#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# hashcat (Debian's, not written here) keeps its OpenCL kernels under
# $XDG_CACHE_HOME/hashcat/kernels. A command model declares that directory
# as a custom cache; the bundle carries it beside PoCL's cache. Proves:
#   - the capture holds hashcat's kernels (and nothing else of XDG_CACHE_HOME);
#   - through exec as root, and as nobody over the root-owned install,
#     hashcat cracks the hash and compiles nothing: its kernels directory is
#     unchanged (names, sizes, mtimes) and PoCL built no new program;
#   - cold vs through exec: wall time of a fresh process, printed side by side.
# Slow (label slow): the cold compile of hashcat's kernels on PoCL takes
# minutes on a 2-core machine. Env: PREWARM, PREWARM_RUNTIME; ROUNDS (3).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || skip "needs root (installs as root, runs hashcat as nobody)"
command -v hashcat > /dev/null || skip "hashcat not installed"
command -v setpriv > /dev/null || skip "setpriv not installed"
require_opencl_device
make_scratch hashcat
chmod 755 "$SCRATCH"
HASH=900150983cd24fb0d6963f7d28e17f72 # md5("abc")
HASHCAT=(hashcat -m 0 -a 3 --force --potfile-disable -O --quiet "$HASH" '?l?l?l')
mkdir -p "$SCRATCH/home" "$SCRATCH/nobody-home" "$SCRATCH/nobody-tmp"
chown 65534:65534 "$SCRATCH/nobody-home" "$SCRATCH/nobody-tmp"
# hashcat finds its session directory by XDG_DATA_HOME or else the passwd
# entry's home, never $HOME: nobody's is /nonexistent (hashcat fails there
# without prewarm too), so nobody gets an XDG_DATA_HOME of its own.
as_nobody() {
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    env HOME="$SCRATCH/nobody-home" XDG_DATA_HOME="$SCRATCH/nobody-home/.local/share" TMPDIR="$SCRATCH/nobody-tmp" "$@"
}
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" > "$SCRATCH/last.out" 2> "$SCRATCH/last.err"; t1=$(date +%s.%N); python3 -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))' "$t0" "$t1"; }
cracked() { grep -q "^$HASH:abc$" "$SCRATCH/last.out" || { cat "$SCRATCH/last.out" "$SCRATCH/last.err" >&2; fail "$1: hashcat did not crack the hash"; }; }
median() { printf '%s\n' "$@" | LC_ALL=C sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
kernels() { (cd "$1" && find . -type f -printf '%P %s %T@\n' | LC_ALL=C sort); }
pocl_programs() { (cd "$1" && find . -name '*.so' | LC_ALL=C sort); }

step "cold: fresh hashcat and PoCL caches"
cold=$(seconds env HOME="$SCRATCH/home" XDG_CACHE_HOME="$SCRATCH/cold-xdg" POCL_CACHE_DIR="$SCRATCH/cold-pocl" "${HASHCAT[@]}")
cracked cold
echo "cold: $cold s"

step "build: hashcat's cache declared as a custom cache"
mkdir -p "$SCRATCH/keys"
"$PREWARM" keygen --out "$SCRATCH/keys/test_only_hashcat" > /dev/null 2>&1 || fail "keygen failed"
cat > "$SCRATCH/hashcat.yaml" <<YAML
version: 1
models:
  - name: hashcat-md5
    command:
      argv: [hashcat, -m, "0", -a, "3", --force, --potfile-disable, -O, --quiet, "$HASH", "?l?l?l"]
      caches:
        - {name: hashcat, variable: XDG_CACHE_HOME, subdir: hashcat}
      kinds: [pocl]
      timeout: 30m
precisions: [fp32]
targets: [cpu]
YAML
"$PREWARM" build "$SCRATCH/hashcat.yaml" --key "$SCRATCH/keys/test_only_hashcat.key" --out "$SCRATCH/bundle" \
  2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "prewarm build failed"; }
grep -q "^cache hashcat XDG_CACHE_HOME$" "$SCRATCH/bundle/manifest" || fail "no custom cache in the bundle"
grep -q " custom/hashcat/hashcat/kernels/.*\.kernel$" "$SCRATCH/bundle/manifest" || fail "no hashcat kernels captured"

step "install as root"
ROOT="$SCRATCH/root"
expect_exit 0 "$PREWARM_RUNTIME" install "$SCRATCH/bundle" --trust "$SCRATCH/keys/test_only_hashcat.pub" --root "$ROOT"
KDIR="$ROOT/custom/hashcat/hashcat/kernels"
kernels "$KDIR" > "$SCRATCH/kernels-installed"
pocl_programs "$ROOT/pocl" > "$SCRATCH/pocl-installed"
echo "installed: $(wc -l < "$SCRATCH/kernels-installed") hashcat kernels, $(wc -l < "$SCRATCH/pocl-installed") PoCL programs"

step "through exec as root, $ROUNDS fresh processes"
times=()
for _ in $(seq "$ROUNDS"); do
  times+=("$(seconds env HOME="$SCRATCH/home" "$PREWARM_RUNTIME" exec --root "$ROOT" -- "${HASHCAT[@]}")")
  cracked "exec as root"
done
kernels "$KDIR" | diff "$SCRATCH/kernels-installed" - || fail "hashcat compiled kernels again through exec (above)"
pocl_programs "$ROOT/pocl" | diff "$SCRATCH/pocl-installed" - || fail "PoCL built new programs through exec"
warm=$(median "${times[@]}")
echo "exec as root: ${times[*]} s (median $warm)"

step "through exec as nobody over the root-owned install"
nobody_s=$(seconds as_nobody "$PREWARM_RUNTIME" exec --root "$ROOT" -- "${HASHCAT[@]}")
cracked "exec as nobody"
grep -E "is not writable by uid 65534; using a private copy" "$SCRATCH/last.err" || fail "no private copy announced"
copy=$(find "$SCRATCH/nobody-tmp/prewarm-65534" -mindepth 2 -maxdepth 2 -name custom -type d)
(cd "$copy/hashcat/hashcat/kernels" && find . -type f -printf '%P %s\n' | LC_ALL=C sort) > "$SCRATCH/kernels-nobody"
cut -d' ' -f1,2 "$SCRATCH/kernels-installed" | diff - "$SCRATCH/kernels-nobody" || fail "hashcat compiled again as nobody"
echo "exec as nobody (first run, private copy included): $nobody_s s"
echo "hashcat -m 0 on PoCL: cold $cold s | exec as root median $warm s | exec as nobody $nobody_s s | cold/exec $(python3 -c 'import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 1))' "$cold" "$warm")x"
pass
