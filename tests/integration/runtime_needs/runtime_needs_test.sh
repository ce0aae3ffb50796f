#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What an application needs at run time, end to end on the real PoCL device:
#   1. bad input: a denied runtime_env variable, a custom cache named like a
#      built-in kind, a custom cache outside its directory: `prewarm plan`
#      exits 2 naming FILE:LINE:COLUMN;
#   2. one bundle with a custom cache (cache_tool.sh, hashcat's layout under
#      XDG_CACHE_HOME, captured with `subdir`) and runtime_env, plus a pyopencl
#      program's PoCL cache; installed by root;
#   3. `env --format sh|json` exports the custom cache and runtime_env, quoted;
#   4. root runs the tool through exec: it reuses the installed kernel;
#   5. `nobody` (setpriv) runs the pyopencl program and the tool through exec
#      over the root-owned caches: both work (result checked, not only the
#      exit code), from a private copy that exec announces, with no new PoCL
#      program built; the same program pointed straight at the root-owned
#      cache is shown for contrast;
#   6. a second channel into the same root is refused (E_CHANNEL_OCCUPIED),
#      and --replace-channel replaces it on purpose.
# Env: PREWARM, PREWARM_RUNTIME.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=/usr/bin/python3
PROGRAM="$HERE/small_opencl_program.py"
TOOL="$HERE/cache_tool.sh"
[ "$(id -u)" = 0 ] || skip "needs root (installs as root, runs the application as nobody)"
command -v setpriv > /dev/null || skip "setpriv not installed"
require_opencl_device
"$PYTHON" -c "import pyopencl" 2>/dev/null || skip "python3-pyopencl not installed for $PYTHON"
make_scratch runtime-needs
chmod 755 "$SCRATCH"
export PYOPENCL_CTX=0
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$SCRATCH/nobody-home" TMPDIR="$SCRATCH/nobody-tmp" "$@"; }
mkdir -p "$SCRATCH/nobody-home" "$SCRATCH/nobody-tmp"
chown 65534:65534 "$SCRATCH/nobody-home" "$SCRATCH/nobody-tmp"

manifest() { # NAME CHANNEL EXTRA-MODELS
  cat > "$SCRATCH/$1.yaml" <<YAML
version: 1
models:
  - name: tool
    command:
      argv: [$TOOL]
      runtime_env: {TOOL_EXPECT: "warm from the bundle"}
      caches:
        - {name: tool, variable: XDG_CACHE_HOME, subdir: tool}
      kinds: [pocl]
$3
precisions: [fp32]
targets: [cpu]
bundle:
  channel: $2
YAML
}

step "bad input names the manifest line"
manifest bad-denied test/a "" && sed -i 's/TOOL_EXPECT: "warm from the bundle"/LD_PRELOAD: \/tmp\/x.so/' "$SCRATCH/bad-denied.yaml"
expect_exit 2 "$PREWARM" plan "$SCRATCH/bad-denied.yaml"
assert_stderr_contains "bad-denied.yaml:6:21: models[0].command.runtime_env.LD_PRELOAD: variable LD_PRELOAD is denied"
manifest bad-kind test/a "" && sed -i 's/name: tool, variable/name: cuda, variable/' "$SCRATCH/bad-kind.yaml"
expect_exit 2 "$PREWARM" plan "$SCRATCH/bad-kind.yaml"
assert_stderr_contains "bad-kind.yaml:8:18: models[0].command.caches[0].name: custom cache name \"cuda\" collides with a built-in cache kind"
manifest bad-outside test/a "" && sed -i 's/subdir: tool/subdir: ..\/..\/etc/' "$SCRATCH/bad-outside.yaml"
expect_exit 2 "$PREWARM" plan "$SCRATCH/bad-outside.yaml"
assert_stderr_contains "bad-outside.yaml:8:"
assert_stderr_contains "'../../etc' is not a relative path inside the cache directory"

step "build: custom cache + runtime_env + a pyopencl program's PoCL cache"
mkdir -p "$SCRATCH/keys"
"$PREWARM" keygen --out "$SCRATCH/keys/test_only_needs" > /dev/null 2>&1 || fail "keygen failed"
manifest needs test/a "  - name: opencl
    command:
      argv: [$PYTHON, $PROGRAM]
      runtime_env: {PYOPENCL_NO_CACHE: \"1\"}
      env: {PYOPENCL_NO_CACHE: \"1\"}
      kinds: [pocl]"
"$PREWARM" build "$SCRATCH/needs.yaml" --key "$SCRATCH/keys/test_only_needs.key" --out "$SCRATCH/bundle" \
  2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "prewarm build failed"; }
grep -q "^cache tool XDG_CACHE_HOME$" "$SCRATCH/bundle/manifest" || fail "no cache line in the signed manifest"
grep -q "^env TOOL_EXPECT warm from the bundle$" "$SCRATCH/bundle/manifest" || fail "no env line in the signed manifest"
grep -q "^file .* custom/tool/tool/kernels/k0.bin$" "$SCRATCH/bundle/manifest" || fail "the tool's kernel is not in the bundle"
! grep -q "custom/tool/unrelated" "$SCRATCH/bundle/manifest" || fail "files outside subdir were shipped"

step "install as root; env exports the custom cache and runtime_env"
ROOT="$SCRATCH/root"
# TOOL_EXPECT is no vetted cache switch: the image's trust policy allows it.
printf 'version: 1\nkeys:\n  - file: test_only_needs.pub\ninstall:\n  environment: [TOOL_EXPECT]\n' > "$SCRATCH/keys/policy.yaml"
expect_exit 0 "$PREWARM_RUNTIME" install "$SCRATCH/bundle" --trust "$SCRATCH/keys/policy.yaml" --root "$ROOT"
"$PREWARM_RUNTIME" env --root "$ROOT" > "$SCRATCH/env.sh"
# The installed version's own directory (runtime/install/install_layout.hpp).
grep -qx "export XDG_CACHE_HOME='$ROOT/.prewarm/versions/[0-9a-f]*-[A-Za-z0-9]*/custom/tool'" "$SCRATCH/env.sh" || { cat "$SCRATCH/env.sh"; fail "XDG_CACHE_HOME not exported"; }
grep -qx "export TOOL_EXPECT='warm from the bundle'" "$SCRATCH/env.sh" || fail "runtime_env not exported"
grep -qx "export PYOPENCL_NO_CACHE='1'" "$SCRATCH/env.sh" || fail "runtime_env of the second model not exported"
(eval "$(cat "$SCRATCH/env.sh")"; [ "$TOOL_EXPECT" = "warm from the bundle" ]) || fail "sh exports do not eval"
"$PREWARM_RUNTIME" env --root "$ROOT" --format json |
  "$PYTHON" -c 'import json,sys; e=json.load(sys.stdin)["environment"]; assert e["TOOL_EXPECT"]=="warm from the bundle", e' ||
  fail "json env wrong"

step "root runs the tool through exec: the installed kernel is reused"
out=$("$PREWARM_RUNTIME" exec --root "$ROOT" -- "$TOOL")
[ "$out" = "tool: reused k0.bin (TOOL_EXPECT=warm from the bundle)" ] || fail "exec as root: $out"

step "nobody over root-owned caches"
pocl_entries() { (cd "$1" && find . -name '*.so' | LC_ALL=C sort); }
pocl_entries "$ROOT/pocl" > "$SCRATCH/installed-so"
[ -s "$SCRATCH/installed-so" ] || fail "no PoCL kernels installed"
contrast=$(as_nobody env POCL_CACHE_DIR="$ROOT/pocl" PYOPENCL_NO_CACHE=1 "$PYTHON" "$PROGRAM" 2>&1 | tail -1) || true
echo "for contrast, nobody straight on the root-owned cache: $contrast"
as_nobody "$PREWARM_RUNTIME" exec --root "$ROOT" -- "$PYTHON" "$PROGRAM" > "$SCRATCH/nobody.json" 2> "$SCRATCH/nobody.err" ||
  { cat "$SCRATCH/nobody.err" "$SCRATCH/nobody.json" >&2; fail "the program failed as nobody through exec"; }
"$PYTHON" -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); assert r["ok"] is True, r' \
  "$SCRATCH/nobody.json" || fail "wrong result as nobody"
grep -q "pocl: .* is not writable by uid 65534; using a private copy" "$SCRATCH/nobody.err" ||
  { cat "$SCRATCH/nobody.err"; fail "exec did not say it made a private copy"; }
copy=$(find "$SCRATCH/nobody-tmp/prewarm-65534" -mindepth 2 -maxdepth 2 -name pocl -type d)
[ -n "$copy" ] || fail "no private copy under TMPDIR/prewarm-65534"
pocl_entries "$copy" > "$SCRATCH/copy-so"
diff "$SCRATCH/installed-so" "$SCRATCH/copy-so" || fail "PoCL built new programs as nobody (above): the cache missed"
out=$(as_nobody "$PREWARM_RUNTIME" exec --root "$ROOT" -- "$TOOL" 2> "$SCRATCH/nobody-tool.err")
[ "$out" = "tool: reused k0.bin (TOOL_EXPECT=warm from the bundle)" ] || fail "tool as nobody: $out"
! grep -q "private copy" "$SCRATCH/nobody-tool.err" || fail "the private copy was made again"

step "a second channel in the same root is refused, never silently replaced"
manifest other test/b ""
"$PREWARM" build "$SCRATCH/other.yaml" --key "$SCRATCH/keys/test_only_needs.key" --out "$SCRATCH/other-bundle" \
  2> "$SCRATCH/build2.err" || { cat "$SCRATCH/build2.err" >&2; fail "second build failed"; }
before=$(tree_hash "$ROOT")
expect_exit 1 "$PREWARM_RUNTIME" install "$SCRATCH/other-bundle" --trust "$SCRATCH/keys/test_only_needs.pub" --root "$ROOT"
assert_stderr_contains "E_CHANNEL_OCCUPIED"
# Serials default to the build time: the message names both, whatever they are.
assert_stderr_contains "holds channel test/a serial "
assert_stderr_contains "; this bundle is channel test/b serial "
assert_stderr_contains "--replace-channel"
[ "$(tree_hash "$ROOT")" = "$before" ] || fail "the refused install changed the root"
expect_exit 0 "$PREWARM_RUNTIME" install "$SCRATCH/other-bundle" --trust "$SCRATCH/keys/test_only_needs.pub" --root "$ROOT" --replace-channel
"$PREWARM_RUNTIME" status --root "$ROOT" | grep -q "test/b" || fail "status does not show the replacing channel"
pass
