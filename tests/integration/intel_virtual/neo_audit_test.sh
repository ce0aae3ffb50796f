#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `prewarm-runtime status --audit` tells NEO cache hits from misses, checked
# with the real Intel driver (NEO 26.27 of the Intel root) posing as an A770:
#   - a NEO slice installed for the A770, then the application's programs
#     built on the virtual A770 through `prewarm-runtime exec --audit` with
#     the installed NEO_CACHE_DIR: the audit says every entry reused, 0 new,
#     and NEO's own statistics (NEO_CACHE_STATS=1) agree: hits only;
#   - the same slice installed anyway (--ignore-requirement) on a host posing
#     as another GPU (an A380, acm-g11): NEO's key differs, every build misses,
#     and the audit names the .cl_cache entries NEO wrote as new;
#   - one program not in the cache among cached ones: 1 new, the rest reused;
#   - NEO's bookkeeping (stats, config.file) and key traces (BinaryCacheTrace)
#     never count as entries.
# Not verifiable here (no Intel GPU): that a real card gives the same verdicts.
# Cost: ~7 s (one recorded build for arc-a770, three virtual runs).
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${CL_REPLAY:?}" "${APP:?}"
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/recorded_setup.sh"
recorded_setup intel-neo-audit

step "build: the A770's NEO slice from the recorded programs"
"$PREWARM" keygen --out keys/test_only_neo_audit >/dev/null
expect_exit 0 "$PREWARM" build manifest.yaml --key keys/test_only_neo_audit.key --out bundle
programs=$(dirname "$(find bundle.logs -name programs.list | head -1)")
[ -f "$programs/programs.list" ] || fail "no replayable program list beside the job log"
igc=$(stat -L -c '%s:%Y' "$ROOT/usr/lib/x86_64-linux-gnu/libigc.so.2")
host() { # pci-id revision ip-version product -> a test-double host description
  cat <<JSON
[{"description": "test Intel GPU (not a GPU)", "vendor": "intel", "pci-id": "$1", "pci-revision": "$2",
  "intel.driver": "26.27.039122", "intel.igc": "$igc", "intel.ip-version": "$3",
  "intel.opencl-extensions": "$(intel_extensions_value "$4" "$1")"}]
JSON
}
host 0x56a0 0x08 12.55.8 acm-g10 > a770.json
host 0x56a5 0x05 12.56.5 acm-g11 > a380.json
mkdir vendors && echo "$ROOT/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so" > vendors/neo.icd

# The application on the virtual device (product, PCI id), with the installed
# caches' environment and NEO's statistics and key traces on, audited.
run_app() { # root product pci-id host-json [program list]
  (cd "$programs" && env -u LD_LIBRARY_PATH PREWARM_HOST_DEVICES="$SCRATCH/$4" \
     OCL_ICD_VENDORS="$SCRATCH/vendors" NEO_CACHE_STATS=1 BinaryCacheTrace=1 \
     NEOReadDebugKeys=1 SetCommandStreamReceiver=5 UseAubStream=0 HardwareInfoOverride=1x5x4 UseBindlessMode=0 \
     ProductFamilyOverride="$2" ForceDeviceId="$3" \
     "$PREWARM_RUNTIME" exec --root "$SCRATCH/$1" --audit "$SCRATCH/$1.exec.json" -- \
     "$ROOT/lib64/ld-linux-x86-64.so.2" --library-path "$(intel_library_path)" \
     "$CL_REPLAY" "${5:-programs.list}") > "$1.out" 2> "$1.err" || { cat "$1.out" "$1.err"; fail "the application on the virtual device"; }
  PREWARM_HOST_DEVICES="$SCRATCH/$4" "$PREWARM_RUNTIME" status --root "$1" --audit --json > "$1.status.json" \
    || fail "status --audit --json"
  PREWARM_HOST_DEVICES="$SCRATCH/$4" "$PREWARM_RUNTIME" status --root "$1" --audit > "$1.status.txt" || fail "status --audit"
  grep -A3 "^audit" "$1.status.txt" || true
}

# verdict ROOT -> "built hits misses reused new stats_hits stats_misses"
verdict() {
  python3 - "$1" <<'PY'
import glob, json, struct, sys
root = sys.argv[1]
built = sum(1 for l in open(f"{root}.out") if l.startswith("built"))
def neo(report):
    for k in report["kinds"]:
        if k["kind"] == "neo":
            return k
    raise SystemExit(f"no neo kind in {report}")
ex = neo(json.load(open(f"{root}.exec.json")))
st = neo(json.load(open(f"{root}.status.json"))["audit"])
stats = glob.glob(f"{root}/**/stats", recursive=True)
hits, misses = struct.unpack("<QQ", open(stats[0], "rb").read(16)) if stats else (-1, -1)
assert st["new_files"] == ex["new_files"], (st, ex)
assert all(not e["entry"].endswith((".trace", ".input")) and "stats" not in e["entry"]
           for e in ex["new_entries"] + ex["reused_entries"]), ex
print(built, ex["reused_files"], ex["new_files"], len(ex["new_entries"]), hits, misses, ex["hit"], st["hit"])
PY
}

step "the A770 host: NEO hits; the audit says every entry reused, 0 new"
PREWARM_HOST_DEVICES=$PWD/a770.json expect_exit 0 "$PREWARM_RUNTIME" install bundle \
  --trust keys/test_only_neo_audit.pub --root hit
installed=$(find hit -name '*.cl_cache' | wc -l)
[ "$installed" -gt 0 ] || fail "no NEO entries installed"
run_app hit acm-g10 56a0 a770.json
read -r built reused new new_entries hits misses exec_hit status_hit < <(verdict hit)
echo "hit: $built programs built, NEO stats $hits hits / $misses misses; audit $reused reused, $new new"
[ "$hits" -eq "$built" ] && [ "$misses" -eq 0 ] || fail "NEO did not hit: $hits hits, $misses misses for $built"
# The slice also holds the entries synthesized for a real A770 (neo_card_slice.hpp),
# which the virtual one never opens: what it reuses is one entry per program built.
[ "$reused" -eq "$hits" ] && [ "$new" -eq 0 ] && [ "$exec_hit" = True ] && [ "$status_hit" = True ] \
  || { cat hit.exec.json; fail "the audit of a NEO hit: $reused reused of $installed installed, $new new"; }

step "an A380 host given the A770 slice anyway: NEO misses; the audit names the new entries"
PREWARM_HOST_DEVICES=$PWD/a380.json expect_exit 0 "$PREWARM_RUNTIME" install bundle \
  --trust keys/test_only_neo_audit.pub --root miss --ignore-requirement pci-id --ignore-requirement pci-revision \
  --ignore-requirement intel.ip-version --ignore-requirement intel.opencl-extensions
run_app miss acm-g11 56a5 a380.json
read -r built reused new new_entries hits misses exec_hit status_hit < <(verdict miss)
echo "miss: $built programs built, NEO stats $hits hits / $misses misses; audit $reused reused, $new new ($new_entries entries)"
[ "$misses" -eq "$built" ] && [ "$hits" -eq 0 ] || fail "NEO was expected to miss: $hits hits, $misses misses"
[ "$new" -eq "$built" ] && [ "$new_entries" -eq "$built" ] && [ "$exec_hit" = False ] && [ "$status_hit" = False ] \
  || { cat miss.exec.json; fail "the audit of a NEO miss: $new new files, $new_entries entries for $built builds"; }

step "the A770 again, one program not in the cache: 1 new entry, the others reused"
awk -F'\t' 'NR == 1 {print; printf "%s\t%s -DNEO_AUDIT_NOT_CACHED=1\n", $1, $2; next} {print}' \
  "$programs/programs.list" > "$programs/mixed.list"
rm -f "$(find hit -name stats | head -1)" # NEO adds its counters up over processes
run_app hit acm-g10 56a0 a770.json mixed.list
read -r built reused new new_entries hits misses exec_hit status_hit < <(verdict hit)
echo "mixed: $built programs built, NEO stats $hits hits / $misses misses; audit $reused reused, $new new"
[ "$misses" -eq 1 ] && [ "$hits" -eq $((built - 1)) ] || fail "NEO: $hits hits, $misses misses for $built (1 new)"
[ "$reused" -eq "$hits" ] && [ "$new" -eq 1 ] && [ "$new_entries" -eq 1 ] && [ "$exec_hit" = False ] \
  || { cat hit.exec.json; fail "the audit of one miss among hits: $reused reused, $new new"; }
pass
