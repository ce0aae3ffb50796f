#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An image without libcurl: prewarm-runtime installs a bundle from a directory
# (first and repeated install, env, exec) and refuses a registry install with
# E_REGISTRY naming the package, instead of failing to start at all. The
# library is made unloadable for this test alone: a private mount namespace
# binds /dev/null over it (root and unshare(1) needed; skips otherwise).
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${MAKE_TEST_BUNDLE:?}"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"

# awk reads to the end: an early exit would end ldconfig with SIGPIPE once its
# output outgrows a pipe buffer, and pipefail would end this script silently.
libcurl=$(ldconfig -p | awk '/libcurl\.so\.4 / && !found { print $NF; found = 1 }')
[ -n "$libcurl" ] || skip "no libcurl.so.4 on this host to hide"
libcurl=$(readlink -f "$libcurl")
unshare -m true 2> /dev/null || skip "unshare -m is not permitted here (needs root)"
make_scratch without_libcurl
trap 'rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH"

step "a bundle in a directory"
"$PREWARM" keygen --out keys/test_only_nocurl > /dev/null
mkdir -p tree/pocl && head -c 4096 /dev/urandom > tree/pocl/k.bin
"$MAKE_TEST_BUNDLE" keys/test_only_nocurl.key bundle 1 cpu:cpu:tree
echo '[{"description": "test_only cpu host", "vendor": "cpu"}]' > host.json
export PREWARM_HOST_DEVICES=$PWD/host.json

step "libcurl unloadable: install from the directory, again, env, exec; a registry install refused"
# Run in the namespace; each command's status and output are checked outside.
# shellcheck disable=SC2016  # expanded by the inner bash
unshare -m bash -c '
  set -u
  mount --bind /dev/null "$1" || exit 99
  trust=keys/test_only_nocurl.pub
  "$PREWARM_RUNTIME" install bundle --trust "$trust" --root root > first.out 2>&1; echo $? > first.rc
  "$PREWARM_RUNTIME" install bundle --trust "$trust" --root root > again.out 2>&1; echo $? > again.rc
  "$PREWARM_RUNTIME" exec --root root -- sh -c "test -n \"\$POCL_CACHE_DIR\"" > exec.out 2>&1; echo $? > exec.rc
  timeout 30 "$PREWARM_RUNTIME" install "127.0.0.1:9/bundles/app@sha256:$(printf %064d 0)" --trust "$trust" \
    --root pulled --plain-http > pull.out 2>&1; echo $? > pull.rc
  head -c 1 "$1" | wc -c > seen.bytes
' _ "$libcurl" || fail "the namespace could not hide $libcurl"
[ "$(cat seen.bytes)" = 0 ] || fail "libcurl was still readable inside the namespace"
[ "$(cat first.rc)" = 0 ] || { cat first.out; fail "install from a directory failed without libcurl"; }
[ "$(cat again.rc)" = 0 ] && grep -q "already installed" again.out || { cat again.out; fail "repeated install"; }
[ "$(cat exec.rc)" = 0 ] || { cat exec.out; fail "exec without libcurl"; }
[ "$(cat pull.rc)" != 0 ] || fail "a registry install succeeded without libcurl"
grep -q "E_REGISTRY" pull.out && grep -q "libcurl4" pull.out || { cat pull.out; fail "the refusal does not name the package"; }
[ ! -e pulled/.prewarm/installed ] || fail "the refused registry install left a marker"
echo "refused: $(grep -o 'E_REGISTRY.*' pull.out | head -1)"
pass
