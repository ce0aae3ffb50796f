#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `prewarm build` with Intel targets absent from this host: arc-a380 is
# compiled with the real ocloc into a signed slice (every zebin passes
# `ocloc validate`, requirements name the PCI id and the compiler), arc-b580
# is skipped with the reason; this host (no Intel GPU) installs nothing.
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${MANIFEST:?}"
source "$(dirname "$0")/../lib.sh"

command -v ocloc >/dev/null || [ -n "${PREWARM_OCLOC:-}" ] || skip "no ocloc (intel-opencl-icd)"
OCLOC=${PREWARM_OCLOC:-ocloc}
make_scratch aot
cd "$SCRATCH"

step "build: arc-a380 ahead of time, arc-b580 skipped"
"$PREWARM" keygen --out keys/test_only_aot
expect_exit 0 "$PREWARM" build "$MANIFEST" --key keys/test_only_aot.key --out bundle --jobs 2
assert_stderr_contains "does not know 'bmg'"
expect_exit 0 "$PREWARM_RUNTIME" verify bundle --trust keys/test_only_aot.pub

step "the slice: programs/aot/acm-g11, requirements"
grep -q '^require .*pci-id in 0x56a5' bundle/manifest || { cat bundle/manifest; fail "no pci-id requirement"; }
grep -q '^require .*intel.driver == ' bundle/manifest || { cat bundle/manifest; fail "no compiler requirement"; }
slices=(bundle/slices/*.tar.zst)
[ "${#slices[@]}" -eq 1 ] || fail "expected one slice, got ${#slices[@]}"
mkdir slice
zstd -qdc "${slices[0]}" | tar -x -C slice
ls slice/programs/aot/acm-g11/target.arc-a380 >/dev/null || fail "no target record"
count=0
for zebin in slice/programs/aot/acm-g11/*.zebin; do
  "$OCLOC" validate -file "$zebin" -device acm-g11 > validate.log 2>&1 || { cat validate.log; fail "invalid $zebin"; }
  grep -q "Binary is VALID" validate.log || { cat validate.log; fail "invalid $zebin"; }
  count=$((count + 1))
done
[ "$count" -gt 0 ] || fail "no zebins in the slice"
echo "validated $count zebins"

step "this host has no Intel GPU: nothing to install, with the reason"
expect_exit 4 "$PREWARM_RUNTIME" install bundle --trust keys/test_only_aot.pub --root root
pass
