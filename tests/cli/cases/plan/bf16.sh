# bf16 is a precision like the others: one job per target x model, its id ends
# in /bf16, and it is planned as fp16 is (run on cpu, aot for arc-a380, where
# the AOT slice holds the bf16 kernel variants), for built-in and command models
# (a command model is skipped where its device is absent, as at any precision).
cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
  - name: script
    command:
      argv: [python3, warmup.py, --dtype, "{precision}"]
precisions: [bf16, fp16]
targets: [arc-a380, cpu]
YAML
"$PREWARM" plan m.yaml
