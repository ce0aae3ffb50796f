# Every JSON output carries "schema_version" and one naming scheme
# (snake_case; signer_key_ids in both inspect and verify). Golden: each
# command's top-level fields.
source "$CASE_DIR/lib.bash"; key
"$PREWARM" build "$CASE_DIR/quick.yaml" --key keys/test_only_first_hour.key --out b --json report.json \
  >/dev/null 2>&1 || exit 99
trust=(--trust keys/test_only_first_hour.pub)
fields() {
  python3 -c '
import json, sys
doc = json.loads(sys.stdin.read())
keys = " ".join(sorted(k for k in doc if k != "schema_version"))
print("%s: schema_version=%s: %s" % (sys.argv[1], doc.get("schema_version"), keys))
' "$1"
}
"$PREWARM" targets --json | fields "targets --json"
"$PREWARM" plan "$CASE_DIR/quick.yaml" --json | fields "plan --json"
"$PREWARM" plan "$CASE_DIR/quick.yaml" --shards 1 --format json | fields "plan --format json"
fields "build --json FILE" <report.json
"$PREWARM" inspect b --json "${trust[@]}" | fields "inspect --json"
"$PREWARM_RUNTIME" verify b --json "${trust[@]}" | fields "verify --json"
"$PREWARM_RUNTIME" install b --json "${trust[@]}" --root root 2>/dev/null | fields "install --json"
"$PREWARM_RUNTIME" install nosuch --json "${trust[@]}" --root root --on-failure warn 2>/dev/null |
  fields "install --json (not installed)"
"$PREWARM_RUNTIME" status --root root --json 2>/dev/null | fields "status --json"
"$PREWARM_RUNTIME" env --root root --format json | fields "env --format json"
