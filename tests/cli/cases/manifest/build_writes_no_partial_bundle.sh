# A manifest error stops `prewarm build` before any job runs: exit 2 and no
# bundle directory (not even a partial one) appears.
"$PREWARM" keygen --out keys/test_only_key >/dev/null 2>&1 || { echo "keygen failed" >&2; exit 99; }
cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
precisions: [fp32, fp8]
targets: [cpu]
YAML
"$PREWARM" build m.yaml --key keys/test_only_key.key --out bundle
status=$?
ls -A
exit $status
