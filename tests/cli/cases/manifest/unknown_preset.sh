cat >m.yaml <<'YAML'
version: 1
models:
  - name: plates
    preset: lpr-net
precisions: [fp32]
targets: [cpu]
YAML
"$PREWARM" plan m.yaml
