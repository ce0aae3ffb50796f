#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `prewarm build` with Intel targets absent from this host: arc-a380 is
# compiled with the real ocloc into a signed slice (every zebin passes
# `ocloc validate`, requirements name the PCI id and the compiler), arc-b580
# is skipped with the reason; this host (no Intel GPU) installs nothing; an
# A380 host (test doubles) installs it and the engine's Level Zero backend is
# served every program NATIVE from the installed zebins.
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${MANIFEST:?}"
source "$(dirname "$0")/../lib.sh"

command -v ocloc >/dev/null || [ -n "${PREWARM_OCLOC:-}" ] || skip "no ocloc (intel-opencl-icd)"
# The host's ocloc alone (22.43 knows no bmg): the Intel root's toolchain has
# a test of its own (intel_root_test.sh).
export PREWARM_INTEL_ROOT=none
OCLOC=${PREWARM_OCLOC:-ocloc}
# The AOT path alone: where an Intel root is, the jobs would also make NEO
# slices on a virtual device (tests/integration/intel_virtual tests those).
export PREWARM_INTEL_ROOT=/nonexistent
make_scratch aot
cd "$SCRATCH"

step "build: arc-a380 ahead of time, arc-b580 skipped"
"$PREWARM" keygen --out keys/test_only_aot
expect_exit 0 "$PREWARM" build "$MANIFEST" --key keys/test_only_aot.key --out bundle --jobs 2
assert_stderr_contains "does not know 'bmg'"
expect_exit 0 "$PREWARM_RUNTIME" verify bundle --trust keys/test_only_aot.pub

step "the slice: programs/aot/acm-g11, requirements"
grep -q '^require .*pci-id in 0x56a5' bundle/manifest || { cat bundle/manifest; fail "no pci-id requirement"; }
grep -q '^require .*intel.driver in .*,1\.3\.[0-9]*$' bundle/manifest || { cat bundle/manifest; fail "no compiler requirement"; }
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

# An A380 host played by the Level Zero test double (not a GPU), found by the
# runtime's own host probe through the real loader (no OpenCL ICD for it, as
# in Level Zero-only images): the slice installs, and `prewarm run --backend
# level-zero` (the double runs each module's OpenCL C on PoCL) is served
# every program NATIVE from the installed zebins, every op output checked.
step "an A380 host (test double): the runtime's probe finds it, installs; the engine on Level Zero from the installed zebins"
[ -n "${ZE_TEST_DRIVER:-}" ] && [ -n "${KERNELS_DIR:-}" ] || skip "ZE_TEST_DRIVER / KERNELS_DIR not set"
compiler=$(sed -n 's/^require .*intel\.driver in \([0-9.]*\),.*/\1/p' bundle/manifest | head -1)
[ -n "$compiler" ] || { cat bundle/manifest; fail "no compiler version in the requirements"; }
# NEO's Level Zero driver reports its own version with the release's build
# (1.3.<build>, runtime/level_zero/aot_programs.hpp): the double does the same.
export ZE_ENABLE_ALT_DRIVERS=$ZE_TEST_DRIVER PREWARM_ZE_TEST_DEVICE_ID=0x56a5
export PREWARM_ZE_TEST_DRIVER_VERSION=1.3.$((10#${compiler##*.}))
"$PREWARM_RUNTIME" install bundle --trust keys/test_only_aot.pub --root root > install.out \
  || fail "install on the A380 test double failed"
grep -q "slice arc-a380-.* for device .*(prewarm test double (not a GPU))" install.out \
  || { cat install.out; fail "the slice was not installed for the Level Zero device"; }
record=$(find root -name target.arc-a380 -path '*/aot/acm-g11/*' | head -1)
[ -n "$record" ] || fail "the installed cache has no aot/acm-g11/target.arc-a380"
programs=$(dirname "$(dirname "$(dirname "$record")")")
zebins=$(find "$programs/aot/acm-g11" -name '*.zebin' | wc -l)
PREWARM_ZE_TEST_EXECUTE_SOURCES=$KERNELS_DIR PREWARM_ZE_TEST_EXECUTE_PROGRAMS=$programs \
PREWARM_ZE_TEST_LOG=$PWD/ze_calls.log \
  "$PREWARM" run qwen2.5-0.5b --precision fp32 --backend level-zero --store "$programs" --json > run.json \
  || fail "prewarm run --backend level-zero failed"
python3 - "$zebins" <<'PY' || fail "the Level Zero run's report"
import json, sys
r = json.load(open("run.json"))
zebins = int(sys.argv[1])
assert r["device"]["backend"] == "level-zero", r["device"]
assert "test double" in r["device"]["description"], r["device"]
assert r["aot"]["fallbacks"] == 0, r["aot"]
assert r["aot"]["served"] == zebins, (r["aot"]["served"], zebins)
passes = r["accuracy"]["forward_passes"]
assert passes and all(p["passed"] for p in passes), passes
print(f'{r["aot"]["served"]} programs served NATIVE, {r["launches"]} launches, '
      f'{r["accuracy"]["op_checks"]} op outputs checked')
PY
natives=$(grep -c 'module-create format=native' ze_calls.log || true)
[ "$natives" -eq "$zebins" ] || fail "$natives native modules created, expected $zebins"
pass
