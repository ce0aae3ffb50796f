#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Three applications as a user warms them up, built by `prewarm build` for a
# virtual Arc B580, Arc A770 and Meteor Lake U (NEO 26.27 of the Intel root
# posing as each): per target, what the job records (NEO entries written on
# the virtual device), what it ships for the card (entries synthesized from
# the target's key profile), the slices' size, the warm-up's time against the
# synthesis', and the proof's verdict.
#   - clpeak (Debian, unmodified; kinds [programs]): run once on this host's
#     PoCL with the OpenCL layer recording, its program rebuilt on the virtual
#     device; the re-run there hits every entry.
#   - dpctl (PyPI, SYCL on Level Zero; kinds [neo, sycl]): the warm-up runs on
#     the virtual device; the re-run hits every NEO entry.
#   - OpenVINO 2026.4.1 (PyPI; kinds [neo]): compile_model(model, "GPU") of a
#     network with constant weights. On the virtual A770 and MTL-U it returns
#     and the re-run hits; on the virtual B580 it spins in the driver (NEO's
#     no-hardware mode), so the deadline stops it: the job keeps what was built
#     with a verdict (did not finish, probably missed what it compiles later)
#     and runs no hit proof (the deadline is paid once).
# Every figure is printed as one "figures:" line (docs/guide/intel.md's table).
# Not settled here (no Intel GPU): that a card computes the synthesized names
# (its key profile's values) and that the binaries run.
# Cost on a 2-core VM under load: ~5 min (clpeak's program is large).
# Skips without the Intel root; each application without its environment.
# APPS="dpctl openvino" runs only those (by hand).
set -euo pipefail
: "${PREWARM:?}" "${CL_REPLAY:?}"
source "$(dirname "$0")/../lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
require_intel_root
export PREWARM_INTEL_ROOT=$ROOT PREWARM_CL_REPLAY=$CL_REPLAY
unset PREWARM_OCLOC
# The B580's OpenVINO warm-up never returns: its deadline, short enough for a test.
export PREWARM_VIRTUAL_DEADLINE=${PREWARM_VIRTUAL_DEADLINE:-40}
make_scratch intel-synth-apps
cd "$SCRATCH"
export POCL_CACHE_DIR="$SCRATCH/pocl"
"$PREWARM" keygen --out keys/test_only_apps >/dev/null

TARGETS=(arc-b580 arc-a770 mtl-u-igpu)
apps=()
if [ -n "${APPS:-}" ]; then read -r -a apps <<< "$APPS"  # a subset, for a re-run by hand
elif command -v clpeak >/dev/null && clinfo -l 2>/dev/null | grep -q Device; then
  apps+=(clpeak)
else
  echo "clpeak or PoCL not installed on this host: its case not run"
fi
if [ -z "${APPS:-}" ]; then
  [ -f "$ROOT/opt/prewarm-sycl/.complete" ] && apps+=(dpctl) || echo "no SYCL environment (./setup.sh intel-sycl): dpctl not run"
  [ -f "$ROOT/opt/prewarm-openvino/.complete" ] && apps+=(openvino) \
    || echo "no OpenVINO environment (./setup.sh intel-sycl): OpenVINO not run"
fi
[ ${#apps[@]} -gt 0 ] || skip "none of clpeak, dpctl, OpenVINO can run here"

workload() { # app -> the model's command lines
  case $1 in
    clpeak) printf '    command:\n      argv: [clpeak, --kernel-latency]\n      timeout: 10m\n      kinds: [programs]\n' ;;
    dpctl) printf '    command:\n      argv: [%s, %s]\n      timeout: 5m\n      kinds: [neo, sycl]\n' \
             "$ROOT/opt/prewarm-sycl/bin/python" "$HERE/../intel_virtual/sycl_warmup.py" ;;
    openvino) printf '    command:\n      argv: [%s, %s]\n      timeout: 5m\n      kinds: [neo]\n' \
                "$ROOT/opt/prewarm-openvino/bin/python" "$HERE/openvino_warmup.py" ;;
  esac
}

for app in "${apps[@]}"; do
  for target in "${TARGETS[@]}"; do
    step "$app on a virtual $target"
    dir=$app-$target
    mkdir "$dir"
    { printf 'version: 1\nmodels:\n  - name: %s\n' "$app"; workload "$app"
      printf 'precisions: [fp32]\ntargets: [%s]\nbundle:\n  channel: default\n  expires: 90d\n' "$target"; } > "$dir/manifest.yaml"
    expect_exit 0 "$PREWARM" build "$dir/manifest.yaml" --key keys/test_only_apps.key --out "$dir/bundle" \
      --json "$dir/report.json" --jobs "$(nproc)"
    python3 - "$app" "$target" "$dir" <<'PY' || { echo "$LAST_STDERR" | tail -30; fail "$app on $target"; }
import json, sys
app, target, d = sys.argv[1:]
jobs = json.load(open(f"{d}/report.json"))["jobs"]
job = next(j for j in jobs if j["executor"].startswith("virtual-device"))
r = job["report"]
slices = 0
for line in open(f"{d}/bundle/manifest"):
    if line.startswith("payload "):
        slices += int(line.split()[2])
if app == "clpeak":
    neo = r["neo"]
    recorded, written_bytes, fill = neo["entries"], neo["entry_bytes"], neo["fill_seconds"]
    card = neo["card"]
    proof = f'{neo["proof_hits"]} hits, {neo["proof_misses"]} misses, {neo["proof_new_entries"]} new'
    assert neo["proof_misses"] == 0 and neo["proof_new_entries"] == 0 and neo["proof_hits"] == recorded >= 1, neo
else:
    recorded, written_bytes, fill = r["neo_entries"], r["neo_bytes"], r["fill_seconds"]
    card = r["card"]
    if r["deadline_reached"]:
        # A warm-up the deadline stopped is a verdict, and no proof runs after it.
        assert "verdict" in r and "did not finish" in r["verdict"], r
        assert "proof_neo_hits" not in r, r
        proof = "deadline: " + r["verdict"]
    else:
        assert r["proof_neo_misses"] == 0 and r["proof_new_neo_entries"] == 0, r
        # dpctl's re-run loads its SYCL device image from SYCL's cache: the
        # NEO entry of that image's JIT is not looked up again.
        assert r["proof_neo_hits"] >= (1 if app == "dpctl" else recorded), r
        proof = f'{r["proof_neo_hits"]} hits, {r["proof_neo_misses"]} misses, {r["proof_new_neo_entries"]} new'
        if app == "dpctl":
            proof += f', SYCL {r["proof_sycl_loaded"]} loaded'
assert recorded >= 1, r
assert card is not None and card["entries"] >= recorded and not card["skipped"], card
ratio = card["seconds"] / fill if fill > 0 else float("inf")
print(f'figures: {app} {target}: NEO wrote {recorded} entries ({written_bytes} bytes) in a {fill:.1f} s warm-up; '
      f'card entries {card["entries"]} ({card["entry_bytes"]} bytes, profile {card["profile"]}, {len(card["unknown"])} '
      f'values not known) in {card["seconds"]:.1f} s ({ratio:.2f}x the warm-up); slices {slices} bytes; '
      f'job {job["seconds"]:.1f} s; proof: {proof}')
PY
    # The verdict of a warm-up the deadline stopped is also a warning of the build.
    if python3 -c 'import json, sys; sys.exit(not any(j.get("report", {}).get("deadline_reached")
                  for j in json.load(open(sys.argv[1]))["jobs"]))' "$dir/report.json"; then
      grep -q "did not finish" <<< "$LAST_STDERR" || { echo "$LAST_STDERR" | tail; fail "$app on $target: no deadline warning"; }
    fi
  done
done
pass
