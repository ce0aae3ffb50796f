cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
precisions: [fp32, bfloat16]
targets: [cpu]
YAML
"$PREWARM" plan m.yaml
