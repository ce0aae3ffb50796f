# build: plan -> job in a child -> slice -> signed bundle, reproducible
# timestamps from SOURCE_DATE_EPOCH; the per-job report says what ran where.
"$PREWARM" keygen --out keys/test_only_build >/dev/null 2>&1 || exit 99
export SOURCE_DATE_EPOCH=1700000000
"$PREWARM" build "$CASE_DIR/tiny.yaml" --key keys/test_only_build.key --out bundle --serial 7 --json report.json --allow-expired \
  >stdout.txt 2>stderr.txt || { cat stderr.txt >&2; exit 1; }
sed 's/^[0-9a-f]\{64\}  /SHA256  /' stdout.txt
grep -E '^prewarm: \[2/2\] ok +cpu/tiny/fp32 \(run on 0: .*\) [0-9.]+ s: [0-9]+ variants' stderr.txt >/dev/null && echo "job reported"
grep -F "prewarm: [1/2] skip    arc-b580/tiny/fp32: arc-b580: ocloc" stderr.txt >/dev/null && echo "skip reported"
python3 - <<'PY'
import json
r = json.load(open("report.json"))
for j in r["jobs"]:
    print(j["id"], j["state"], j["strategy"], j["executor"] or "-")
for s in r["slices"]:
    print(s["id"][:4], len(s["id"]), s["jobs"])
    print(sorted(q.split(" ")[0] for q in s["requirements"]))
PY
ls bundle bundle/slices | sed 's/cpu-[0-9a-f]\{12\}/cpu-ID/'
"$PREWARM" inspect bundle | grep -E '^(channel|serial|issued-at|expires) '
