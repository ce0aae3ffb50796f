# Without --keep-going a failed job stops the build and no bundle is written,
# but the --json report is: CI reads it for the failed job and why.
"$PREWARM" keygen --out keys/test_only_build >/dev/null 2>&1 || exit 99
sed -e 's/targets: \[cpu, arc-b580\]/targets: [cpu]/' -e 's/^precisions:/  - name: broken\n    command: {argv: [\/bin\/false]}\nprecisions:/' \
  "$CASE_DIR/tiny.yaml" >m.yaml
"$PREWARM" build m.yaml --key keys/test_only_build.key --out bundle --json out/report.json 2>stderr.txt
status=$?
grep -E '^prewarm: error: job cpu/broken failed: ' stderr.txt >/dev/null &&
  grep -E '\(no bundle written; --keep-going packages the other jobs\)$' stderr.txt >/dev/null && echo "failure reported"
test -e bundle && echo "bundle written" || echo "no bundle"
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
print("failed:", doc["failed"], "slices:", len(doc["slices"]))
for job in doc["jobs"]:
    print(job["id"], job["state"], "error: " + ("yes" if job.get("error") else "no"))
' out/report.json
exit $status
