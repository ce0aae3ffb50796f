# --targets FILE replaces the built-in registry; its errors name the file.
cat >t.yaml <<'YAML'
version: 1
targets:
  lab-cpu:
    vendor: cpu
    description: "the lab's CPU"
  lab-gpu:
    vendor: nvidia
    description: "a GPU"
    sm: 90
    ocloc_device: acm-g10
YAML
"$PREWARM" targets --targets t.yaml
