# A misspelt key names file:line:column and suggests the right one.
cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
precisions: [fp32]
tragets: [cpu]
YAML
"$PREWARM" plan m.yaml
