cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
precisions: [fp32]
shapes:
  batch_sizes: 4
targets: [cpu]
YAML
"$PREWARM" plan m.yaml
