#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Meteor Lake H host and a bundle with only an mtl-u slice: the driver loads
# an mtl-u-b0 zebin on mtl-h-b0 (NEO's compatibility mapping), so the AOT
# slice's pci-id requirement names Meteor Lake H's ids too, and it installs;
# the mtl-u NEO slice does not (NEO's key hashes the device id: it could only
# miss there). Then the engine's Level Zero backend on the REAL driver posing
# as Meteor Lake H (PCI 0x7d55, IP 12.71.4) is served the mtl-u binary from
# the installed store, natively (no SPIR-V build, no NEO cache entry).
# The install side's host is a test double (PREWARM_HOST_DEVICES); the load
# runs on NEO 26.27 of the Intel root, no GPU. Not verifiable here: that the
# binary runs on a real Meteor Lake H. Cost: ~5 s. Skips without the root.
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${CL_REPLAY:?}"
source "$(dirname "$0")/../lib.sh"

require_intel_root ocloc
export PREWARM_INTEL_ROOT=$ROOT PREWARM_CL_REPLAY=$CL_REPLAY
unset PREWARM_OCLOC
make_scratch mtl-h-install
cd "$SCRATCH"

step "build: gptq-linear for mtl-u-igpu only (AOT slice + NEO slice)"
preset_manifest gptq-linear gptq-linear "[fp32]" "[mtl-u-igpu]" > manifest.yaml
"$PREWARM" keygen --out keys/test_only_mtl >/dev/null
expect_exit 0 "$PREWARM" build manifest.yaml --key keys/test_only_mtl.key --out bundle
aot_slice=$(awk '/^slice /{id=$2} /^require pci-id in /{print id}' bundle/manifest | head -1)
neo_slice=$(awk '/^slice /{id=$2} /^require intel.igc/{print id}' bundle/manifest | head -1)
[ -n "$aot_slice" ] && [ -n "$neo_slice" ] || { cat bundle/manifest; fail "no AOT and NEO slices"; }
grep -q "^require pci-id in 0x7d40,0x7d45,0x7d55,0x7d60,0x7dd5$" bundle/manifest \
  || { cat bundle/manifest; fail "the mtl-u AOT slice does not name Meteor Lake H's ids"; }

step "a Meteor Lake H host (test double): the AOT slice installs, the NEO slice does not"
igc=$(stat -L -c '%s:%Y' "$ROOT/usr/lib/x86_64-linux-gnu/libigc.so.2")
cat > host.json <<JSON
[{"description": "test Meteor Lake H (not a GPU)", "vendor": "intel", "pci-id": "0x7d55", "pci-revision": "0x00",
  "intel.driver": "26.27.039122", "intel.ip-version": "12.71.4", "intel.igc": "$igc"}]
JSON
PREWARM_HOST_DEVICES=$PWD/host.json expect_exit 0 "$PREWARM_RUNTIME" install bundle --trust keys/test_only_mtl.pub \
  --root root
grep -qF "slice $neo_slice skipped: intel.ip-version: host 12.71.4, slice 12.70.4 (NEO would miss every entry)" \
  <<< "$LAST_STDERR" || { echo "$LAST_STDERR"; fail "the NEO slice was not refused by its IP version"; }
record=$(find root -name target.mtl-u-igpu -path '*/aot/mtl-u/*' | head -1)
[ -n "$record" ] || fail "the mtl-u AOT programs are not installed"
programs=$(dirname "$(dirname "$(dirname "$record")")")
[ -z "$(find root -name '*.cl_cache' -o -name '*.l0_cache')" ] || fail "NEO entries installed on Meteor Lake H"

step "the real driver posing as Meteor Lake H loads the installed mtl-u binary natively"
mkdir neo
env -u LD_LIBRARY_PATH -u ZE_ENABLE_ALT_DRIVERS PREWARM_OCLOC="$ROOT/host-bin/ocloc" \
  NEOReadDebugKeys=1 SetCommandStreamReceiver=5 UseAubStream=0 HardwareInfoOverride=1x5x4 UseBindlessMode=0 \
  ProductFamilyOverride=mtl-h ForceDeviceId=7D55 NEO_CACHE_DIR="$SCRATCH/neo" \
  ZE_ENABLE_ALT_DRIVERS="$ROOT/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1" \
  timeout -s KILL 120 "$ROOT/lib64/ld-linux-x86-64.so.2" \
  --library-path "$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu" \
  "$PREWARM" -v run gptq-linear --precision fp32 --backend level-zero --store "$programs" > run.out 2>&1 || true
grep -q "(pci 0x7d55, driver 1.3.39122)" run.out || { cat run.out; fail "the virtual Meteor Lake H"; }
grep -q "module from the native binary of AOT target mtl-u" run.out || { cat run.out; fail "not served the mtl-u binary"; }
grep -q "recompiled from IR" run.out && fail "the driver recompiled the mtl-u binary"
[ -z "$(find neo -name '*.l0_cache')" ] || fail "a native load compiled something (NEO cache entry)"
grep -q "E_OP_MISMATCH" run.out || fail "the unexecuted result was not refused"
echo "served: $(grep -o "module from the native binary[^)]*)" run.out | head -1)"
pass
