#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# AOT serving on the REAL Level Zero driver (NEO 26.27 of the Intel root)
# posing as an Arc B580 with no GPU, beside the test double's cases:
#   - the root's ocloc compiles gptq-linear's program for bmg (`prewarm build`),
#     and the engine's Level Zero backend, given those AOT programs, selects the
#     bmg target for the device (pci-id 0xe20b, the driver's Level Zero version
#     1.3.39122 = release 26.27.039122, IP 20.1.0 read through
#     ze_device_ip_version_ext_t) and the real driver loads the zebin with
#     ZE_MODULE_FORMAT_NATIVE: no SPIR-V build, no NEO cache entry;
#   - a target record of another driver release: the SPIR-V fallback, saying why;
#   - a target record of another stepping (bmg-g31's IP 20.2.0, which does not
#     load on 20.1.0): the SPIR-V fallback, saying why;
#   - a zebin of another device under bmg's name (acm-g11's): the real driver
#     does not reject it but compiles the IR ocloc put in it (its build log
#     says "recompiled from IR"): reported as a JIT build, not the AOT binary;
#     the same zebin without IR (-exclude_ir) is rejected, and the module is
#     built from the store's SPIR-V.
# Kernels do not execute on a virtual device: each run ends in the engine's op
# check (E_OP_MISMATCH), never a wrong answer. Not verifiable here: that the
# zebin runs on a real B580. Cost: ~10 s. Skips without the Intel root.
set -euo pipefail
: "${PREWARM:?}"
source "$(dirname "$0")/../lib.sh"

require_intel_root ocloc
KERNELS=$(cd "$(dirname "$0")/../../../kernels" && pwd)
make_scratch ze-aot-real-driver
cd "$SCRATCH"

step "the root's ocloc compiles gptq-linear for bmg (arc-b580)"
preset_manifest gptq-linear gptq-linear "[fp32]" "[arc-b580]" > manifest.yaml
"$PREWARM" keygen --out keys/test_only_aot >/dev/null
PREWARM_INTEL_ROOT=none PREWARM_OCLOC="$ROOT/host-bin/ocloc" \
  expect_exit 0 "$PREWARM" build manifest.yaml --key keys/test_only_aot.key --out bundle
mkdir store
zstd -qdc bundle/slices/*.tar.zst | tar -x -C store
zebin=$(find store/programs/aot/bmg -name '*.zebin')
[ "$(echo "$zebin" | wc -l)" = 1 ] && [ -s "$zebin" ] || fail "not one bmg zebin: $zebin"
grep -q "^ip-version 20.1.0$" store/programs/aot/bmg/target.arc-b580 || fail "the bmg target record's IP"

run_virtual_b580() { # programs-dir neo-cache-dir
  mkdir -p "$2"
  env -u LD_LIBRARY_PATH -u ZE_ENABLE_ALT_DRIVERS PREWARM_OCLOC="$ROOT/host-bin/ocloc" \
    NEOReadDebugKeys=1 SetCommandStreamReceiver=5 UseAubStream=0 HardwareInfoOverride=1x5x4 UseBindlessMode=0 \
    ProductFamilyOverride=bmg ForceDeviceId=E20B NEO_CACHE_DIR="$2" \
    ZE_ENABLE_ALT_DRIVERS="$ROOT/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1" \
    timeout -s KILL 120 "$ROOT/lib64/ld-linux-x86-64.so.2" \
    --library-path "$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu" \
    "$PREWARM" -v run gptq-linear --precision fp32 --backend level-zero --store "$1"
}
expect_spirv() { # why-pattern neo-cache-dir
  grep -q "module from SPIR-V (.*$1" <<< "$LAST_STDERR" || { echo "$LAST_STDERR"; fail "no SPIR-V fallback for: $1"; }
  [ -n "$(find "$2" -name '*.l0_cache')" ] || fail "the SPIR-V fallback wrote no NEO cache entry"
  echo "fallback: $(grep -o "module from SPIR-V (.*" <<< "$LAST_STDERR" | head -1 | cut -c1-200)"
}

step "the real driver loads bmg's zebin natively on the virtual B580"
expect_exit 1 run_virtual_b580 store/programs neo-native
grep -q "(pci 0xe20b, driver 1.3.39122)" <<< "$LAST_STDERR" || { echo "$LAST_STDERR"; fail "device or driver version"; }
grep -q "module from the native binary of AOT target bmg" <<< "$LAST_STDERR" \
  || { echo "$LAST_STDERR"; fail "the bmg zebin was not loaded natively"; }
grep -q "E_OP_MISMATCH" <<< "$LAST_STDERR" || fail "the unexecuted result was not refused"
[ -z "$(find neo-native -name '*.l0_cache')" ] || fail "a native load compiled something (NEO cache entry)"
echo "native: $(grep -o "module from the native binary[^)]*)" <<< "$LAST_STDERR" | head -1)"

step "a target record of another driver release: SPIR-V"
cp -r store other-driver
sed -i 's/^compiler .*/compiler 26.26.038000/' other-driver/programs/aot/bmg/target.arc-b580
expect_exit 1 run_virtual_b580 other-driver/programs neo-driver
expect_spirv "compiled by ocloc 26.26.038000 and the device's driver is 1.3.39122" neo-driver

step "a target record of another stepping (bmg-g31, IP 20.2.0): SPIR-V"
cp -r store other-stepping
sed -i 's/^ip-version .*/ip-version 20.2.0/' other-stepping/programs/aot/bmg/target.arc-b580
expect_exit 1 run_virtual_b580 other-stepping/programs neo-stepping
expect_spirv "is for IP 20.2.0 and the device is IP 20.1.0" neo-stepping

step "acm-g11's zebin under bmg's name: the driver compiles its IR instead"
cp -r store foreign
"$ROOT/host-bin/ocloc" compile -q -file "$KERNELS/gptq.cl" -device acm-g11 -options "-DLOCAL_SIZE=64 -I $KERNELS" \
  -output acm -output_no_suffix -out_dir "$SCRATCH/acm" >/dev/null
cp acm/acm.bin "foreign/${zebin#store/}"
expect_exit 1 run_virtual_b580 foreign/programs neo-foreign
grep -q "native binary not for this device: the driver compiled its IR instead (.*recompiled from IR" \
  <<< "$LAST_STDERR" || { echo "$LAST_STDERR"; fail "the driver's recompilation was not reported"; }
grep -q "module from the native binary" <<< "$LAST_STDERR" && fail "a recompiled binary reported as native"
[ -n "$(find neo-foreign -name '*.l0_cache')" ] || fail "the driver's recompilation wrote no NEO cache entry"

step "the same zebin without IR: the real driver rejects it, SPIR-V"
cp -r store bare
"$ROOT/host-bin/ocloc" compile -q -file "$KERNELS/gptq.cl" -device acm-g11 -options "-DLOCAL_SIZE=64 -I $KERNELS" \
  -output bare -output_no_suffix -out_dir "$SCRATCH/bare" -exclude_ir >/dev/null
cp bare/bare.bin "bare/${zebin#store/}"
expect_exit 1 run_virtual_b580 bare/programs neo-bare
grep -q "native binary rejected: ZE_RESULT_" <<< "$LAST_STDERR" || { echo "$LAST_STDERR"; fail "the driver did not reject it"; }
expect_spirv "native binary rejected" neo-bare
pass
