#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real SYCL application from PyPI (dpctl 0.22.1 on intel-sycl-rt 2026.2.0,
# ./setup.sh intel-sycl) as a command warm-up for an absent Arc B580, run by
# `prewarm build` on the real Intel driver of the Intel root posing as it:
#   - the job runs the user's command on the virtual B580 with a deadline
#     (kernels never execute there), and keeps what was compiled;
#   - NEO's cache (the SPIR-V program and the JIT of the SYCL device image)
#     and SYCL's persistent cache become the target's neo and sycl slices;
#   - the hit proof, a second run on the same virtual device against copies,
#     counts NEO hits (NEO_CACHE_STATS) and SYCL items loaded, no new entry;
#   - a warm-up that never returns is stopped by the deadline: its caches are
#     kept with a verdict (it did not finish, what it built, what it probably
#     missed), no hit proof is run after it (the deadline is paid once), and
#     under verify: require the job fails;
#   - a custom cache (caches:) of the warm-up is captured as its own slice.
# Not verifiable here (no Intel GPU): that a real B580 computes the same NEO and
# SYCL keys (feature tables; the SYCL key names the v1 Level Zero adapter's
# platform, see prewarm/virtual_device/virtual_command.hpp), and that the binaries
# run. Cost: ~20-40 s on 2 cores.
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
source "$(dirname "$0")/../lib.sh"
WARMUP=$(cd "$(dirname "$0")" && pwd)/sycl_warmup.py

require_intel_root
VENV=$ROOT/opt/prewarm-sycl
[ -f "$VENV/.complete" ] || skip "no SYCL environment $VENV (make it with ./setup.sh intel-sycl)"
export PREWARM_INTEL_ROOT=$ROOT
unset PREWARM_OCLOC
make_scratch intel-virtual-sycl
[ -z "${KEEP_SCRATCH:-}" ] || trap - EXIT
cd "$SCRATCH"

manifest() { # name argv timeout [extra command lines]
  cat <<YAML
version: 1
models:
  - name: $1
    command:
      argv: $2
      timeout: $3
      kinds: ${KINDS:-[neo, sycl]}
${4:-}
precisions: [fp32]
targets: [arc-b580]
bundle:
  channel: default
  expires: 90d
YAML
}

step "plan: a command naming neo and sycl runs on a virtual B580"
manifest dpctl "[$VENV/bin/python, $WARMUP]" 2m > manifest.yaml
plan=$("$PREWARM" plan manifest.yaml 2>&1) || { echo "$plan"; fail "prewarm plan"; }
grep -q "virtual bmg" <<< "$plan" || { echo "$plan"; fail "the plan does not say virtual bmg"; }

step "build: dpctl's warm-up on the virtual B580"
"$PREWARM" keygen --out keys/test_only_sycl >/dev/null
start=$(date +%s.%N)
expect_exit 0 "$PREWARM" build manifest.yaml --key keys/test_only_sycl.key --out bundle --json report.json
end=$(date +%s.%N)
python3 - "$start" "$end" <<'PY' || { echo "$LAST_STDERR" | tail -20; fail "the build report"; }
import json, sys
job = json.load(open("report.json"))["jobs"][0]
assert job["executor"] == "virtual-device-command", job
r = job["report"]
assert r["neo_entries"] >= 2, r        # the SPIR-V program and the SYCL image's JIT
assert r["sycl_items"] >= 1, r         # the SYCL device image
assert r["proof_neo_hits"] >= 1 and r["proof_neo_misses"] == 0, r
assert r["proof_sycl_loaded"] >= 1, r
assert r["proof_new_neo_entries"] == 0 and r["proof_new_sycl_items"] == 0, r
print(f'{job["id"]}: {r["virtual_device"]}: {r["ending"]} in {r["fill_seconds"]:.1f} s -> NEO {r["neo_entries"]} '
      f'entries ({r["neo_bytes"]} bytes), SYCL {r["sycl_items"]} items ({r["sycl_bytes"]} bytes); re-run: NEO '
      f'{r["proof_neo_hits"]} hits / {r["proof_neo_misses"]} misses, SYCL {r["proof_sycl_loaded"]} loaded, '
      f'{r["proof_seconds"]:.1f} s; job {job["seconds"]:.1f} s, build {float(sys.argv[2]) - float(sys.argv[1]):.1f} s')
PY
for want in "require pci-id == 0xe20b" "require opencl.device == Intel(R) Arc(TM) B580 Graphics" \
            "require intel.igc == "; do
  grep -qF "$want" bundle/manifest || { cat bundle/manifest; fail "missing: $want"; }
done
# The B580's PCI revision and IP version are assumed (its key profile's unknown:):
# not required, named as not known instead (docs/guide/intel.md).
for assumed in "require pci-revision" "require intel.ip-version"; do
  ! grep -qF "$assumed" bundle/manifest || { cat bundle/manifest; fail "assumed, yet a requirement: $assumed"; }
done
grep -q "^kind sycl\|sycl" bundle/manifest || fail "no sycl slice"

step "installed on a B580 host (test double): the warm-up on the virtual B580 reads both installed caches"
igc=$(stat -L -c '%s:%Y' "$ROOT/usr/lib/x86_64-linux-gnu/libigc.so.2")
cat > host.json <<JSON
[{"description": "test B580 (not a GPU)", "vendor": "intel", "pci-id": "0xe20b", "pci-revision": "0x00",
  "intel.driver": "26.27.039122", "intel.igc": "$igc", "intel.ip-version": "20.1.0",
  "opencl.device": "Intel(R) Arc(TM) B580 Graphics"}]
JSON
PREWARM_HOST_DEVICES=$PWD/host.json expect_exit 0 "$PREWARM_RUNTIME" install bundle --trust keys/test_only_sycl.pub \
  --root root
variables=$(PREWARM_HOST_DEVICES=$PWD/host.json "$PREWARM_RUNTIME" env --root root 2>/dev/null)
neo_dir=$(sed -n "s/^export NEO_CACHE_DIR='\?\([^']*\)'\?$/\1/p" <<< "$variables")
sycl_dir=$(sed -n "s/^export SYCL_CACHE_DIR='\?\([^']*\)'\?$/\1/p" <<< "$variables")
[ -d "$neo_dir" ] && [ -d "$sycl_dir" ] || { echo "$variables"; fail "no installed NEO and SYCL cache directories"; }
before=$(find "$neo_dir" "$sycl_dir" -type f -name '*_cache' -o -type f -name '*.bin' | sort)
mkdir vendors && echo "$ROOT/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so" > vendors/neo.icd
env -u LD_LIBRARY_PATH OCL_ICD_VENDORS="$SCRATCH/vendors" NEO_CACHE_DIR="$neo_dir" NEO_CACHE_STATS=1 \
  SYCL_CACHE_PERSISTENT=1 SYCL_CACHE_DIR="$sycl_dir" SYCL_CACHE_TRACE=1 UR_LOADER_USE_LEVEL_ZERO_V2=0 \
  ZE_ENABLE_ALT_DRIVERS="$ROOT/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1" \
  NEOReadDebugKeys=1 SetCommandStreamReceiver=5 UseAubStream=0 HardwareInfoOverride=1x5x4 UseBindlessMode=0 \
  ProductFamilyOverride=bmg ForceDeviceId=E20B OverrideDeviceName="Intel(R) Arc(TM) B580 Graphics" \
  timeout -s KILL 120 "$ROOT/lib64/ld-linux-x86-64.so.2" --library-path "$(intel_library_path)" \
  "$VENV/bin/python" "$WARMUP" > installed.out 2>&1 || { cat installed.out; fail "the warm-up on the installed caches"; }
grep -q "using cached device binary: $sycl_dir" installed.out || { cat installed.out; fail "SYCL did not load the installed item"; }
read -r hits misses < <(python3 -c "import struct; print(*struct.unpack('<QQ', open('$neo_dir/stats','rb').read(16)))")
[ "$hits" -ge 1 ] && [ "$misses" -eq 0 ] || fail "NEO stats on the installed cache: $hits hits, $misses misses"
[ "$(find "$neo_dir" "$sycl_dir" -type f -name '*_cache' -o -type f -name '*.bin' | sort)" = "$before" ] \
  || fail "the warm-up wrote new entries beside the installed ones"
echo "installed caches: SYCL item loaded, NEO $hits hits / $misses misses, nothing new"

step "the OpenCL backend: the same warm-up on opencl:gpu fills NEO's OpenCL cache"
manifest dpctl-ocl "[$VENV/bin/python, $WARMUP, 'opencl:gpu']" 2m > opencl.yaml
expect_exit 0 "$PREWARM" build opencl.yaml --key keys/test_only_sycl.key --out ocl-bundle --json ocl.json
python3 - <<'PY' || fail "the OpenCL report"
import json
r = json.load(open("ocl.json"))["jobs"][0]["report"]
assert r["neo_entries"] >= 1 and r["proof_neo_hits"] >= 1 and r["proof_neo_misses"] == 0, r
print(f'opencl:gpu: NEO {r["neo_entries"]} entries, SYCL {r["sycl_items"]} items; re-run NEO {r["proof_neo_hits"]} hits')
PY
mkdir ocl-neo
slice=$(awk '/^slice /{id=$2} /^require intel.igc/{print id}' ocl-bundle/manifest | head -1)
zstd -qdc "ocl-bundle/slices/$slice.tar.zst" | tar -x -C ocl-neo
[ -n "$(find ocl-neo -name '*.cl_cache')" ] || fail "no .cl_cache entry from the OpenCL backend"

step "kinds [neo]: the hit proof runs as installed, with no SYCL cache (the bundle ships none)"
KINDS="[neo]" manifest dpctl-neo "[$VENV/bin/python, $WARMUP]" 2m > neo-only.yaml
expect_exit 0 "$PREWARM" build neo-only.yaml --key keys/test_only_sycl.key --out neo-bundle --json neo-only.json
python3 - <<'PY' || fail "the kinds [neo] report"
import json
job = json.load(open("neo-only.json"))["jobs"][0]
r = job["report"]
# SYCL's cache would answer for the NEO entries: without it every NEO entry is looked up, and hits.
assert r["proof_not_shipped"] == ["sycl"] and r["proof_sycl_loaded"] == 0, r
assert r["proof_neo_hits"] >= 2 and r["proof_neo_misses"] == 0 and r["proof_new_neo_entries"] == 0, r
print(f'kinds [neo]: re-run as installed: NEO {r["proof_neo_hits"]} hits, {r["proof_neo_misses"]} misses, SYCL {r["proof_sycl_loaded"]} loaded')
PY

step "deadline: a warm-up that never returns keeps what it compiled, with a verdict and no second deadline"
cat > hang.py <<'PY'
import os, pathlib, runpy, sys, time
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
# An application's own cache (OpenVINO's CACHE_DIR blobs), written before its wait.
pathlib.Path(os.environ["APP_CACHE"], "blob.bin").write_bytes(b"compiled for the device")
time.sleep(3600)  # a wait that never ends on a virtual device
PY
manifest hang "[$VENV/bin/python, $SCRATCH/hang.py, $WARMUP]" 2m \
  "      caches: [{name: app, variable: APP_CACHE}]" > hang.yaml
export PREWARM_VIRTUAL_DEADLINE=8
expect_exit 0 "$PREWARM" build hang.yaml --key keys/test_only_sycl.key --out hang-bundle --json hang.json
python3 - <<'PY' || fail "the deadline report"
import json
job = json.load(open("hang.json"))["jobs"][0]
r = job["report"]
assert r["deadline_reached"] and r["deadline_seconds"] == 8, r
# The deadline is paid once: the job took less than the warm-up and another deadline.
assert job["seconds"] < r["fill_seconds"] + r["deadline_seconds"], (job["seconds"], r)
assert r["neo_entries"] >= 2 and r["sycl_items"] >= 1, r
assert "did not finish" in r["verdict"] and "probably missed" in r["verdict"], r
assert "proof_seconds" not in r, r  # no re-run after a cut-off warm-up
assert r["custom"]["app"]["files"] == 1, r
print(f'deadline {r["deadline_seconds"]} s reached ({r["ending"]}); kept NEO {r["neo_entries"]}, SYCL {r["sycl_items"]}, '
      f'custom app {r["custom"]["app"]["files"]} file; verdict: {r["verdict"][:60]}...')
PY
grep -q "did not finish" <<< "$LAST_STDERR" || { echo "$LAST_STDERR" | tail; fail "the build did not warn of the cut-off"; }
grep -q "^cache app APP_CACHE" hang-bundle/manifest || { cat hang-bundle/manifest; fail "no custom app slice"; }

step "deadline under verify: require: the cut-off warm-up fails the job"
manifest hang-require "[$VENV/bin/python, $SCRATCH/hang.py, $WARMUP]" 2m \
  "      caches: [{name: app, variable: APP_CACHE}]
      verify: require" > hang-require.yaml
if "$PREWARM" build hang-require.yaml --key keys/test_only_sycl.key --out require-bundle 2> require.err; then
  tail require.err; fail "a warm-up cut off by the deadline passed verify: require"
fi
grep -q "verify: require, and the warm-up did not finish" require.err \
  || { tail require.err; fail "the require failure does not name the cut-off"; }
[ ! -e require-bundle/manifest ] || fail "a bundle was written although the only job failed"
pass
