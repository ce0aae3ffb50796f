#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One ocloc run per distinct input in a build (issue 40, item 6;
# prewarm/aot/shared_ocloc_runs.hpp): two models of one architecture built for
# two absent Intel targets compile each program once per card, counted from
# outside prewarm by an Intel root whose ocloc logs every run
# (counting_root.sh), and the bundle holds the same files, byte for byte, as
# the build of one of the models alone (where no run is shared).
# PREWARM_OCLOC names the counting root's ocloc, so that it serves every
# target (not this host's own ocloc where it knows one). Cost: ~1-2 min.
set -euo pipefail
: "${PREWARM:?}" "${CL_REPLAY:?}"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"

require_intel_root
command -v zstd >/dev/null || skip "zstd not installed (to read the bundles' payloads)"
make_scratch ocloc-runs
cd "$SCRATCH"
"$here/counting_root.sh" "$ROOT" root ocloc.log
export PREWARM_INTEL_ROOT=$SCRATCH/root PREWARM_CL_REPLAY=$CL_REPLAY PREWARM_OCLOC=$SCRATCH/root/host-bin/ocloc
"$PREWARM" keygen --out keys/test_only_runs >/dev/null

manifest() {
  printf 'version: 1\nmodels:\n'
  for name in "$@"; do
    printf '  - name: %s\n    preset: gptq-linear\n' "$name"
  done
  printf 'precisions: [fp32]\ntargets: [arc-b580, mtl-u-igpu]\nbundle:\n  channel: default\n  expires: 90d\n'
}
manifest base >one.yaml
manifest base tuned >two.yaml

# build NAME: builds NAME.yaml, keeps the ocloc runs in NAME.runs and the
# slices' files under NAME.files/<slice>/.
build() {
  : >ocloc.log
  expect_exit 0 "$PREWARM" build "$1.yaml" --jobs 2 --key keys/test_only_runs.key --out "$1.bundle" \
    --json "$1.json"
  grep "ocloc:" <<<"$LAST_STDERR" || fail "$1: the build does not say how many ocloc runs it made"
  echo "$LAST_STDERR" >"$1.stderr"
  grep -E '^(compile|validate) ' ocloc.log >"$1.runs" || true
  for payload in "$1.bundle"/slices/*.tar.zst; do
    local dir
    dir=$1.files/$(basename "$payload" .tar.zst)
    mkdir -p "$dir"
    zstd -dcq "$payload" | tar -x -C "$dir"
  done
}

step "one model: every ocloc run is its own (nothing to share)"
build one
python3 - <<'PY' || fail "the one-model build"
import json
jobs = json.load(open("one.json"))["jobs"]
assert [j["state"] for j in jobs] == ["ok", "ok"], [(j["id"], j["state"], j.get("error")) for j in jobs]
for j in jobs:
    card = j["report"]["neo"]["card"]
    assert card["entries"] > 0 and not card["skipped"], card
PY
[ -s one.runs ] || fail "no ocloc run was counted: the counting root's ocloc was not used"
[ -z "$(sort one.runs | uniq -d)" ] || fail "the one-model build ran ocloc twice with the same input"

step "two models of one architecture: each program compiled and validated once per card"
build two
dupes=$(sort two.runs | uniq -d)
[ -z "$dupes" ] || { echo "$dupes" | head -5; fail "ocloc ran more than once with the same input"; }
# The second model's programs are the first's: it adds no ocloc run.
[ "$(sort one.runs)" = "$(sort two.runs)" ] || {
  diff <(sort one.runs) <(sort two.runs) | head -5
  fail "the two-model build ran other ocloc inputs than the one-model build"
}
echo "ocloc runs: $(wc -l <one.runs) for one model, $(wc -l <two.runs) for two"
# Per card: the AOT compiles (-device <ocloc device>) and the NEO entries'
# compiles (-device <IP version>) of each target, once.
for device in bmg 20.1.0 mtl-u 12.70.4; do
  grep -q -- "^compile .* -device $device " two.runs || fail "no ocloc compile for -device $device"
done
grep -q "ocloc: $(wc -l <two.runs) runs for " two.stderr ||
  fail "the builder's count differs from the runs counted outside it: $(grep 'ocloc:' two.stderr)"

step "the shipped files are those of the build without shared runs, byte for byte"
diff -r one.files two.files >/dev/null || {
  diff -r one.files two.files | head -5
  fail "the two-model bundle's slices differ from the one-model bundle's"
}
echo "slices: $(ls one.files | wc -l), files: $(find two.files -type f | wc -l), identical"
pass
