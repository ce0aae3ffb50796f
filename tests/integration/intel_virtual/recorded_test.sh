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
# Cost: ~10 s, and ~30 s more for clpeak (its one large program) when installed.
# Skips without the Intel root.
set -euo pipefail
: "${PREWARM:?}" "${CL_REPLAY:?}" "${APP:?}"
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/recorded_setup.sh"
recorded_setup intel-virtual-recorded

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

# An unmodified OpenCL application from Debian: clpeak's warm-up (its one
# program, recorded on PoCL) fills the A770's NEO cache, and arc-b580's (bmg)
# where this host's ocloc plans it as aot (a newer one than Debian 12's).
command -v clpeak >/dev/null || { echo "clpeak not installed: its case not run"; pass; }
step "clpeak (Debian, unmodified): its programs in the NEO cache of a virtual A770 (and B580 when planned)"
sed -e "s#argv: \[sh, -c, \"$APP build\"\]#argv: [clpeak, --kernel-latency]#" -e 's/layer-app/clpeak/' \
    -e 's/targets: \[arc-a770\]/targets: [arc-a770, arc-b580]/' manifest.yaml > clpeak.yaml
grep -q "argv: \[clpeak" clpeak.yaml || fail "clpeak manifest"
expect_exit 0 "$PREWARM" build clpeak.yaml --key keys/test_only_recorded.key --out clpeak-bundle --json clpeak.json
python3 - <<'PY' || fail "the clpeak build report"
import json
jobs = {j["id"]: j for j in json.load(open("clpeak.json"))["jobs"]}
for job_id, job in sorted(jobs.items()):
    if job["strategy"] != "aot":
        print(f'{job_id}: {job["strategy"]}: {job["reason"]}')
        continue
    assert job["executor"] == "virtual-device-recorded", job
    neo = job["report"]["neo"]
    assert neo["entries"] == neo["programs"] >= 1 and neo["proof_misses"] == 0 and neo["proof_new_entries"] == 0, neo
    print(f'{job_id}: {neo["virtual_device"]}: {neo["programs"]} program(s) -> {neo["entry_bytes"]} bytes of NEO '
          f'entries in {neo["fill_seconds"]:.1f} s; re-run {neo["proof_hits"]} hit(s) in {neo["proof_seconds"]:.2f} s')
assert jobs["arc-a770/clpeak"]["strategy"] == "aot"
PY
pass
