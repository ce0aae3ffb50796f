# yaml-cpp keeps the first of two equal keys; prewarm refuses the manifest.
cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
precisions: [fp32]
targets: [cpu]
precisions: [fp16]
YAML
"$PREWARM" plan m.yaml
