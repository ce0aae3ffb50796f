#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# AOT for absent Intel GPUs of the programs an unmodified application builds:
# a command workload naming kinds [programs] and targets arc-a770 and
# arc-a380 is built on this host (no Intel GPU): the command runs once on
# PoCL with the layer recording, and every OpenCL C program it built is
# compiled with the real ocloc for both targets. Each arc slice holds a
# zebin that passes `ocloc validate` for every program the application
# built (counted independently, by recording the application here).
# Then an A770 host, played by an OpenCL ICD TEST DOUBLE through the real
# loader (tests/support/cl_intel_double: PoCL underneath posing as an Intel
# GPU; it accepts only an installed zebin for its PCI id and builds that
# zebin's source on PoCL — it never runs a zebin): the runtime's own probe
# installs the a770 slice, and the layer serves every build from the
# zebins (audit: hits "from AOT acm-g10"; the double: zebins accepted).
# With another driver version or another PCI id the layer falls back to a
# normal build, with the reason in the audit log, and the application runs.
# What this cannot show: that Intel's driver loads and runs these zebins.
# Needs: PREWARM, PREWARM_RUNTIME, APP, DOUBLE (set by CMake), ocloc.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
require_opencl_device
command -v ocloc >/dev/null || [ -n "${PREWARM_OCLOC:-}" ] || skip "no ocloc (intel-opencl-icd)"
OCLOC=${PREWARM_OCLOC:-ocloc}
# The AOT path alone: where an Intel root is, the jobs would also make NEO
# slices on a virtual device (tests/integration/intel_virtual tests those).
export PREWARM_INTEL_ROOT=/nonexistent
make_scratch layer-aot
cd "$SCRATCH"
export POCL_CACHE_DIR="$SCRATCH/pocl"
WORKLOAD="$APP build && $APP threads 2"

cat > manifest.yaml <<YAML
version: 1
models:
  - name: layer-app
    command:
      argv: [sh, -c, "$WORKLOAD"]
      timeout: 5m
      kinds: [programs]
precisions: [fp32]
targets: [arc-a770, arc-a380]
bundle:
  channel: tests/layer-aot
  expires: 30d
YAML

step "the programs the application builds, recorded here by the layer alone"
mkdir recorded
OPENCL_LAYERS=$LAYER PREWARM_LAYER=record PREWARM_PROGRAM_STORE=$SCRATCH/recorded sh -c "$WORKLOAD" > /dev/null
expected=$(find recorded -name '*.source' | wc -l) # one per (source, options) on the one device
[ "$expected" -ge 3 ] || fail "expected at least 3 recorded sources, got $expected"

step "prewarm build: arc-a770 and arc-a380 ahead of time from one recording"
"$PREWARM" keygen --out keys/test_only_aot > /dev/null 2>&1
"$PREWARM" build manifest.yaml --key keys/test_only_aot.key --out bundle --jobs 2 --json build.json > build.log 2>&1 \
  || { cat build.log >&2; fail "prewarm build"; }
python3 - "$expected" <<'PY' || { cat build.log >&2; fail "the build report"; }
import json, sys
expected = int(sys.argv[1])
jobs = json.load(open("build.json"))["jobs"]
assert len(jobs) == 2, jobs
for job in jobs:
    assert job["strategy"] == "aot" and job["executor"] == "aot-recorded" and job["state"] == "ok", job
    report = job["report"]
    assert report["recorded"] == expected, (report["recorded"], expected)
    assert len(report["programs"]) == expected and not report["left_out"], report
print("both targets:", expected, "recorded programs compiled")
PY
[ "$(grep -c 'recording for AOT' build.log || true)" -le 1 ] || true
"$PREWARM_RUNTIME" verify bundle --trust keys/test_only_aot.pub > /dev/null

step "every arc slice: a validated zebin per recorded program"
for target in arc-a770:acm-g10 arc-a380:acm-g11; do
  name=${target%%:*} device=${target##*:}
  slice=$(ls bundle/slices/ | grep "^$name-" | head -1)
  [ -n "$slice" ] || { ls bundle/slices >&2; fail "no slice for $name"; }
  mkdir "x-$name"
  zstd -qdc "bundle/slices/$slice" | tar -x -C "x-$name"
  [ -f "x-$name/programs/aot/$device/target.$name" ] || fail "$name: no target record"
  count=0
  for zebin in "x-$name/programs/aot/$device"/*.zebin; do
    "$OCLOC" validate -file "$zebin" -device "$device" > validate.log 2>&1 || { cat validate.log; fail "invalid $zebin"; }
    grep -q "Binary is VALID" validate.log || { cat validate.log; fail "invalid $zebin"; }
    count=$((count + 1))
  done
  [ "$count" -eq "$expected" ] || fail "$name: $count zebins for $expected recorded programs"
  echo "$name: $count zebins validated for $device"
done
grep -q '^require .*pci-id in 0x56a0' bundle/manifest || { cat bundle/manifest; fail "no A770 pci-id requirement"; }
compiler=$(sed -n 's/^require .*intel\.driver \(==\|in\) \([0-9.]*\).*/\2/p' bundle/manifest | head -1)
[ -n "$compiler" ] || fail "no compiler requirement"

step "this host (no Intel GPU): nothing to install"
expect_exit 4 "$PREWARM_RUNTIME" install bundle --trust keys/test_only_aot.pub --root nothing

step "an A770 (the OpenCL test double, through the real loader): the a770 slice installs"
mkdir vendors
echo "$DOUBLE" > vendors/prewarm-test-double.icd # Debian's ocl-icd: OCL_ICD_VENDORS, the only ICD
export OCL_ICD_VENDORS=$SCRATCH/vendors
export PREWARM_CL_DOUBLE_DEVICE_ID=0x56a0 PREWARM_CL_DOUBLE_DRIVER_VERSION=$compiler PREWARM_CL_DOUBLE_LOG=$SCRATCH/double.log
"$PREWARM_RUNTIME" install bundle --trust keys/test_only_aot.pub --root root > install.out 2>&1 \
  || { cat install.out; fail "install on the A770 double"; }
grep -q "slice arc-a770-.* for device .*test double" install.out || { cat install.out; fail "the a770 slice was not installed"; }
! grep -q "^  slice arc-a380" install.out || { cat install.out; fail "the a380 slice was installed on an A770"; }
grep -q "slice arc-a380-.* skipped: requirement \"pci-id in 0x56a5\"" install.out || { cat install.out; fail "the a380 slice's skip is not explained"; }
"$PREWARM_RUNTIME" env --root root > env.sh
grep -q "^export PREWARM_LAYER='serve'" env.sh || { cat env.sh; fail "env does not enable the layer"; }
programs=$(find root -name target.arc-a770 -path '*/aot/acm-g10/*' | head -1)
export PREWARM_CL_DOUBLE_AOT=$(dirname "$(dirname "$(dirname "$programs")")")

run_app() { # $1: audit log; the application's stdout in $1.out
  PREWARM_LAYER_AUDIT_LOG=$SCRATCH/$1 "$PREWARM_RUNTIME" exec --root root -- sh -c "$WORKLOAD" > "$1.out" 2> "$1.err" \
    || { cat "$1.err" >&2; fail "exec ($1)"; }
  grep -q "^ok build$" "$1.out" && grep -q "^ok threads 2$" "$1.out" || { cat "$1.out" "$1.err" >&2; fail "the application ($1)"; }
}

step "exec on the A770: every build served from its zebin"
run_app served.jsonl
hits=$(grep -c '"event":"hit".*"from":"AOT acm-g10' served.jsonl || true)
[ "$hits" -eq "$expected" ] || { cat served.jsonl; fail "$hits AOT hits, expected $expected"; }
! grep -q '"event":"miss"' served.jsonl || { cat served.jsonl; fail "a miss on the A770"; }
accepted=$(grep -c '^accepted: zebin .* for acm-g10' double.log || true)
[ "$accepted" -eq "$expected" ] || { cat double.log; fail "the double accepted $accepted zebins, expected $expected"; }

step "another driver version: a normal build, the reason logged"
: > double.log
PREWARM_CL_DOUBLE_DRIVER_VERSION=99.1.1 run_app driver.jsonl
misses=$(grep -c '"event":"miss".*AOT: AOT target acm-g10 matches pci-id 0x56a0 but was compiled by ocloc .* driver is 99.1.1' driver.jsonl || true)
[ "$misses" -eq "$expected" ] || { cat driver.jsonl; fail "$misses misses naming the driver, expected $expected"; }
! grep -q accepted double.log || fail "a zebin reached the driver of another version"

step "an unknown PCI id: a normal build, the reason logged"
PREWARM_CL_DOUBLE_DEVICE_ID=0x1234 run_app pci.jsonl
misses=$(grep -c '"event":"miss".*no AOT target lists pci-id 0x1234' pci.jsonl || true)
[ "$misses" -eq "$expected" ] || { cat pci.jsonl; fail "$misses misses naming the PCI id, expected $expected"; }
! grep -q accepted double.log || fail "a zebin reached a device it was not made for"
pass
