# One manifest, every strategy: cpu runs here, arc-a380 compiles ahead of time
# with the installed ocloc, arc-b580 (bmg) and h100 are skipped with the reason.
cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
precisions: [fp32]
targets: [h100, arc-b580, arc-a380, cpu]
YAML
"$PREWARM" plan m.yaml
