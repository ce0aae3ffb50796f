# Without MANIFEST, plan uses the built-in default: the cpu target runs on the
# OpenCL CPU device (PoCL).
"$PREWARM" plan
