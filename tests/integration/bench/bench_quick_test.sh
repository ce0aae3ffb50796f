#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/run --quick on this machine, then the results file checked: schema,
# every case ran or was skipped with a reason (none failed), medians inside
# their min-max, ratios equal to the ratio of the medians they name, every
# goal judged or marked not measured, one plot per case that ran.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
make_scratch bench
out="$SCRATCH/results"
step "bench/run --quick"
"$PYTHON" "$REPO/bench/run" --quick --build "$BUILD_DIR" --out "$out" --work "$SCRATCH/work" \
  || fail "bench/run --quick failed"
step "results.json"
"$PYTHON" - "$out" <<'PY'
import json, math, sys
from pathlib import Path
out = Path(sys.argv[1])
doc = json.loads((out / "results.json").read_text())
def check(cond, what):
    if not cond:
        sys.exit(f"results.json: {what}")
check(doc["schema_version"] == 1 and doc["quick"] is True, "schema_version 1 and quick")
check(doc["machine"]["cpus"] >= 1 and doc["machine"]["commit"], "machine and commit recorded")
ran = [c for c in doc["cases"] if c["status"] == "ran"]
for c in doc["cases"]:
    check(c["status"] in ("ran", "skipped"), f"{c['name']} {c['status']}: {c['reason']} {c.get('failures')}")
    check(c["status"] == "ran" or c["reason"], f"{c['name']} skipped without a reason")
for c in ran:
    check(c["samples"], f"{c['name']} ran without samples")
    check(not c["failures"], f"{c['name']} failures: {c['failures']}")
    for row in c["summary"]:
        check(row["min"] <= row["median"] <= row["max"], f"{c['name']} median outside min-max: {row}")
    for r in c["ratios"]:
        a, b = r["name"].split("/")
        med = {(s["variant"], s["mode"]): s["median"] for s in c["summary"] if s["metric"] == r["metric"]}
        check(math.isclose(r["value"], med[(r["variant"], a)] / med[(r["variant"], b)], rel_tol=1e-9),
              f"{c['name']} ratio {r}")
    check((out / f"{c['name']}.png").stat().st_size > 1000, f"no plot for {c['name']}")
for g in doc["goals"]:
    check(g["met"] in (True, False, None) and g["target"], f"goal {g}")
names = {c["name"] for c in doc["cases"]}
check({"first_result", "runtime_overhead", "install_throughput", "build_time", "bundle_size", "peak_memory"} <= names,
      f"cases missing: {sorted(names)}")
check("third_party" in names, f"third_party case missing: {sorted(names)}")
print(f"{len(ran)} cases ran, {len(doc['cases']) - len(ran)} skipped, {len(doc['goals'])} goals judged")
PY
grep -q "^## Goals" "$out/results.md" || fail "results.md has no goals section"
pass
