# SPDX-License-Identifier: Apache-2.0
# Sourced (after ../lib.sh) by recorded_test.sh and neo_audit_test.sh:
# recorded_setup NAME checks for PoCL, the Intel root and an ocloc (or skips),
# exports the root and the replay tool, makes the scratch directory NAME the
# current directory with its own PoCL cache, and writes manifest.yaml: the
# layer test application's recorded build for the absent arc-a770.
# Needs CL_REPLAY and APP.
recorded_setup() {
  require_opencl_device
  require_intel_root
  command -v ocloc >/dev/null || [ -n "${PREWARM_OCLOC:-}" ] || skip "no ocloc for the AOT half (intel-opencl-icd)"
  export PREWARM_INTEL_ROOT=$ROOT PREWARM_CL_REPLAY=$CL_REPLAY
  make_scratch "$1"
  cd "$SCRATCH"
  export POCL_CACHE_DIR="$SCRATCH/pocl"
  cat > manifest.yaml <<YAML
version: 1
models:
  - name: layer-app
    command:
      argv: [sh, -c, "$APP build"]
      timeout: 5m
      kinds: [programs]
precisions: [fp32]
targets: [arc-a770]
bundle:
  channel: default
  expires: 90d
YAML
}
