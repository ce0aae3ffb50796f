#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The engine's Level Zero backend on the REAL Level Zero driver (NEO 26.27 of
# the Intel root) posing as an Arc B580 with no GPU (virtual device, see
# prewarm/virtual_device/virtual_device.hpp), beside the test double's cases:
#   - the real loader finds the real driver's device (id 0xe20b, its driver
#     version), the engine gets SPIR-V for it from the root's ocloc and the
#     driver builds each module (zeModuleCreate), writing NEO's .l0_cache;
#   - kernels do not execute on a virtual device (their outputs stay zero), and
#     the engine's op check refuses the result (E_OP_MISMATCH): never a wrong
#     answer;
#   - a second run builds the module from NEO's cache (NEO_CACHE_STATS: a hit,
#     no new entry).
# prewarm (a Debian 12 binary) runs under the root's dynamic loader, the
# root's libraries first and the host's after (the root lacks prewarm's own
# dependencies; newer glibc and libstdc++ take an older binary).
# Cost: ~10 s. Skips without the Intel root or its ocloc wrapper.
set -euo pipefail
: "${PREWARM:?}"
source "$(dirname "$0")/../lib.sh"

require_intel_root ocloc
make_scratch ze-real-driver
cd "$SCRATCH"
mkdir neo

run_virtual_b580() {
  env -u LD_LIBRARY_PATH -u ZE_ENABLE_ALT_DRIVERS PREWARM_OCLOC="$ROOT/host-bin/ocloc" \
    NEOReadDebugKeys=1 SetCommandStreamReceiver=5 UseAubStream=0 HardwareInfoOverride=1x5x4 UseBindlessMode=0 \
    ProductFamilyOverride=bmg ForceDeviceId=E20B NEO_CACHE_DIR="$SCRATCH/neo" NEO_CACHE_STATS=1 \
    ZE_ENABLE_ALT_DRIVERS="$ROOT/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1" \
    timeout -s KILL 120 "$ROOT/lib64/ld-linux-x86-64.so.2" \
    --library-path "$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu" \
    "$PREWARM" -v run gptq-linear --precision fp32 --backend level-zero
}

step "the engine on the real Level Zero driver, virtual B580: modules built, the unexecuted result refused"
expect_exit 1 run_virtual_b580
echo "$LAST_STDERR" | grep -q "level-zero 0: Intel(R) Graphics \[0xe20b\] (pci 0xe20b, driver " \
  || { echo "$LAST_STDERR"; fail "the real driver's virtual B580 was not the device"; }
echo "$LAST_STDERR" | grep -q "E_OP_MISMATCH: .*device output differs from the CPU reference" \
  || { echo "$LAST_STDERR"; fail "the unexecuted result was not refused by the op check"; }
first=$(find neo -name '*.l0_cache' | sort)
[ -n "$first" ] || fail "the driver wrote no .l0_cache entry"
echo "$(echo "$first" | wc -l) .l0_cache entries; $(echo "$LAST_STDERR" | grep -o 'level-zero 0: Intel[^)]*)' | head -1)"

step "again: the module comes from NEO's cache"
expect_exit 1 run_virtual_b580
[ "$(find neo -name '*.l0_cache' | sort)" = "$first" ] || fail "the second run wrote a new entry"
read -r hits misses < <(python3 -c "import struct; print(*struct.unpack('<QQ', open('neo/stats','rb').read(16)))")
[ "$hits" -ge 1 ] || fail "NEO stats: $hits hits, $misses misses"
echo "NEO cache: $hits hits, $misses misses over both runs"
pass
