cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
  - name: qwen
    preset: lprnet
precisions: [fp32]
targets: [cpu]
YAML
"$PREWARM" plan m.yaml
