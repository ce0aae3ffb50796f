#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end spine test (real PoCL device, real OpenSSL/libarchive, real CLIs).
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${MANIFEST:?}"
source "$(dirname "$0")/../lib.sh"

require_opencl_device
make_scratch spine
cd "$SCRATCH"

step "keygen, build, verify"
"$PREWARM" keygen --out keys/test_only_ed25519
"$PREWARM" keygen --out keys/test_only_other
"$PREWARM" build "$MANIFEST" --key keys/test_only_ed25519.key --out bundle
expect_exit 0 "$PREWARM_RUNTIME" verify bundle --trust keys/test_only_ed25519.pub

step "cold run: empty driver cache, no program store"
mkdir -p cold-pocl
POCL_CACHE_DIR=$PWD/cold-pocl PREWARM_PROGRAM_STORE= \
  "$PREWARM" run qwen2.5-0.5b --precision fp32 --batch 1 --prefill 16 --decode 2 --json > cold.json

step "install, then run through prewarm-runtime exec"
expect_exit 0 "$PREWARM_RUNTIME" install bundle --trust keys/test_only_ed25519.pub --root root
"$PREWARM_RUNTIME" exec --root root -- \
  "$PREWARM" run qwen2.5-0.5b --precision fp32 --batch 1 --prefill 16 --decode 2 --json > warm.json
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); 
for k in sys.argv[2].split("."): d=d[k]
print(d)' "$1" "$2"; }
hits=$(json_get warm.json program_store.hits)
misses=$(json_get warm.json program_store.misses)
cold_compile=$(json_get cold.json seconds.compile)
warm_compile=$(json_get warm.json seconds.compile)
cold_first=$(json_get cold.json seconds.first_result)
warm_first=$(json_get warm.json seconds.first_result)
echo "program store: hits=$hits misses=$misses; compile ${cold_compile}s -> ${warm_compile}s; first result ${cold_first}s -> ${warm_first}s"
[ "$hits" -gt 0 ] || fail "the installed program store was not used (hits=$hits)"
[ "$misses" -eq 0 ] || fail "the installed program store missed $misses programs"
# Compilation dominates a cold PoCL start by an order of magnitude; half is a safe margin.
python3 -c "import sys; sys.exit(0 if $warm_compile < 0.5 * $cold_compile else 1)" \
  || fail "installed run compiled for ${warm_compile}s, cold ${cold_compile}s"
python3 -c "import sys; sys.exit(0 if $warm_first < $cold_first else 1)" \
  || fail "installed first result ${warm_first}s is not faster than cold ${cold_first}s"

before=$(tree_hash root)

step "second install of the same bundle is a no-op"
expect_exit 0 "$PREWARM_RUNTIME" install bundle --trust keys/test_only_ed25519.pub --root root
[ "$(tree_hash root)" = "$before" ] || fail "a repeated install changed the cache"

# The rejection cases install over "prev": the installed cache without its
# completion marker, as a root holding an earlier bundle's caches looks. (Over
# "root" itself a bundle with the installed manifest is an idempotent no-op:
# nothing of its payload is read.)
cp -a root prev
rm -f prev/.prewarm/installed
before=$(tree_hash prev)

step "tampered slice payload is rejected, cache untouched"
cp -a bundle tampered
slice=$(ls tampered/slices/*.tar.zst | head -n1)
flip_byte "$slice" 100
expect_exit 3 "$PREWARM_RUNTIME" verify tampered --trust keys/test_only_ed25519.pub
assert_stderr_contains E_PAYLOAD_DIGEST
expect_exit 3 "$PREWARM_RUNTIME" install tampered --trust keys/test_only_ed25519.pub --root prev
assert_stderr_contains E_PAYLOAD_DIGEST
[ "$(tree_hash prev)" = "$before" ] || fail "a rejected install changed the cache"
assert_no_staging prev

step "tampered manifest is rejected"
cp -a bundle tampered-manifest
sed -i 's/^serial .*/serial 999/' tampered-manifest/manifest
expect_exit 3 "$PREWARM_RUNTIME" install tampered-manifest --trust keys/test_only_ed25519.pub --root prev
assert_stderr_contains E_SIG
[ "$(tree_hash prev)" = "$before" ] || fail "a rejected install changed the cache"

step "signature by another key is rejected"
expect_exit 3 "$PREWARM_RUNTIME" verify bundle --trust keys/test_only_other.pub
expect_exit 3 "$PREWARM_RUNTIME" install bundle --trust keys/test_only_other.pub --root prev
[ "$(tree_hash prev)" = "$before" ] || fail "a rejected install changed the cache"

step "truncated bundle is rejected"
cp -a bundle truncated
slice=$(ls truncated/slices/*.tar.zst | head -n1)
truncate -s $(( $(stat -c %s "$slice") / 2 )) "$slice"
expect_exit 3 "$PREWARM_RUNTIME" install truncated --trust keys/test_only_ed25519.pub --root prev
[ "$(tree_hash prev)" = "$before" ] || fail "a rejected install changed the cache"
cp -a bundle truncated-manifest
truncate -s 40 truncated-manifest/manifest
expect_exit 3 "$PREWARM_RUNTIME" install truncated-manifest --trust keys/test_only_ed25519.pub --root prev
[ "$(tree_hash prev)" = "$before" ] || fail "a rejected install changed the cache"
assert_no_staging prev

step "warn mode: a bad bundle reports and exits 0 (the app starts with JIT)"
expect_exit 0 "$PREWARM_RUNTIME" install tampered --trust keys/test_only_ed25519.pub --root prev --on-failure warn
assert_stderr_contains "JIT"
[ "$(tree_hash prev)" = "$before" ] || fail "a rejected install changed the cache"

pass
