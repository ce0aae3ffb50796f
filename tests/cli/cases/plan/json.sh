# --json: one object per job with id, strategy and the reason.
cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
precisions: [fp16]
targets: [arc-b580, cpu]
YAML
"$PREWARM" plan m.yaml --json | python3 -c '
import json, sys
plan = json.load(sys.stdin)
print(plan["shard"], plan["total_jobs"], len(plan["manifest_sha256"]))
for job in plan["jobs"]:
    print(job["id"], job["target"], job["model"], job["precision"], job["strategy"])
'
