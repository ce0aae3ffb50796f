#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A command workload on the virtual Intel device: the application (the layer
# tests' OpenCL app) runs once on this host's PoCL with the OpenCL layer
# recording; for the absent arc-a770 each program it built is compiled by
# ocloc (the AOT slice) AND built through NEO 26.27 posing as the A770 (PCI
# 0x56a0): a NEO slice whose entries a second virtual run reuses (NEO's
# statistics: every build a hit, no new entry), with NEO's key inputs as
# requirements. Covered: what the application builds on PoCL with the same
# source and options; a program it would build only on that GPU is not.
# Cost: ~10 s. Skips without the Intel root.
set -euo pipefail
: "${PREWARM:?}" "${CL_REPLAY:?}" "${APP:?}"
source "$(dirname "$0")/../lib.sh"
require_opencl_device
ROOT=${PREWARM_INTEL_ROOT:-/var/cache/prewarm/intel-sid}
[ -f "$ROOT/.complete" ] || skip "no Intel root at $ROOT (make it with ./setup.sh intel-root)"
command -v ocloc >/dev/null || [ -n "${PREWARM_OCLOC:-}" ] || skip "no ocloc for the AOT half (intel-opencl-icd)"
export PREWARM_INTEL_ROOT=$ROOT PREWARM_CL_REPLAY=$CL_REPLAY
make_scratch intel-virtual-recorded
cd "$SCRATCH"
export POCL_CACHE_DIR="$SCRATCH/pocl"

cat > manifest.yaml <<YAML
version: 1
models:
  - name: layer-app
    command:
      argv: [sh, -c, "$APP build"]
      timeout: 5m
      kinds: [programs]
precisions: [fp32]
targets: [arc-a770]
bundle:
  channel: default
  expires: 90d
YAML

step "build: the recorded programs, compiled ahead of time and built on the virtual A770"
"$PREWARM" keygen --out keys/test_only_recorded >/dev/null
expect_exit 0 "$PREWARM" build manifest.yaml --key keys/test_only_recorded.key --out bundle --json report.json
python3 - <<'PY' || fail "the build report"
import json
job = json.load(open("report.json"))["jobs"][0]
assert job["executor"] == "virtual-device-recorded", job
neo = job["report"]["neo"]
assert neo["pci_id"] == "0x56a0" and neo["entries"] == neo["programs"] > 0, neo
assert neo["proof_new_entries"] == 0 and neo["proof_hits"] == neo["programs"] and neo["proof_misses"] == 0, neo
print(f'{job["id"]}: {neo["programs"]} recorded programs -> {neo["entries"]} NEO entries ({neo["entry_bytes"]} bytes) '
      f'in {neo["fill_seconds"]:.2f} s; re-run {neo["proof_hits"]} hits, {neo["proof_misses"]} misses')
PY
grep -q "^require pci-id == 0x56a0" bundle/manifest && grep -q "^require intel.igc == " bundle/manifest \
  || { cat bundle/manifest; fail "no NEO slice requirements"; }
pass
