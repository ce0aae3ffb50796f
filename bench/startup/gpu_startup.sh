#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# startup_bench.sh on the GPU machine (issue 32, item 4: "measure both on the
# GPU machine and here"): a no-op install, env and exec of the carried
# prewarm-runtime against an earlier build's, a custom-cache bundle for this
# GPU's target (h100/h200) of 128 and 10,000 files.
# Prepare on the build host: bench/command/make_gpu_carry.sh BUILD_DIR, then
# copy the earlier build's prewarm-runtime and prewarm-runtime-full into
# .carry/gpu/before/; carry .carry/gpu.
#   bench/startup/gpu_startup.sh [ROUNDS]     -> out/gpu_startup/{table.md,env.txt}
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
gpu_bench=gpu_startup
# shellcheck source=bench/command/gpu_carry.sh
source "$repo/bench/command/gpu_carry.sh"
[ -x "$carry/before/prewarm-runtime" ] || die "$carry/before/prewarm-runtime missing (the earlier build to compare with)"
gpu_bench_env true
# Both builds run with the carried libraries; the variable is the same for
# every sample, so the host fingerprint stays the install's.
export LD_LIBRARY_PATH="$PW_LD"
export PREWARM_STARTUP_TARGET="$target"
"$repo/bench/startup/startup_bench.sh" "$carry/before/prewarm-runtime" "$carry/bin/prewarm-runtime" \
  "$carry/bin/prewarm" "${1:-9}" | tee "$OUT/table.md"
