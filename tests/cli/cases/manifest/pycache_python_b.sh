# A pycache command whose interpreter option stops bytecode: refused with
# the file, line, argv item and a way out, before any warm-up runs (build).
cat >m.yaml <<'YAML'
version: 1
models:
  - name: tiny
    command:
      argv: [python3, -B, warmup.py]
      kinds: [dynamo, pycache]
precisions: [fp32]
targets: [cpu]
YAML
"$PREWARM" keygen --out test_only_k >/dev/null 2>&1
"$PREWARM" build m.yaml --key test_only_k.key --out bundle
