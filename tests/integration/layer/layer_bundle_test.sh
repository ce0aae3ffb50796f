#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layer through the whole product: `prewarm build` records a command
# workload's programs (kinds: [programs]) through the layer, the bundle is
# installed, `prewarm-runtime env` enables the layer in serve mode, and the
# application run by `prewarm-runtime exec` is served (audit log: hits only).
# Needs: PREWARM, PREWARM_RUNTIME, APP (set by CMake).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
require_opencl_device
make_scratch layer-bundle
cd "$SCRATCH"
cat > manifest.yaml <<YAML
version: 1
models:
  - name: layer-app
    command:
      argv: [$APP, build]
      timeout: 5m
      kinds: [programs]
precisions: [fp32]
targets: [cpu]
bundle:
  channel: tests/layer
  expires: 30d
YAML
step "prewarm build: the layer records the application's program"
"$PREWARM" keygen --out keys/test_only_layer > /dev/null 2>&1
"$PREWARM" build manifest.yaml --key keys/test_only_layer.key --out bundle > build.log 2>&1 || { cat build.log >&2; fail "prewarm build"; }
grep -q "captured programs [1-9]" build.log || { cat build.log >&2; fail "no programs captured"; }
# The hit proof's re-run serves through the layer, as exec does: every
# recorded record reused, nothing new, every build served.
proof=$(grep -o "hit proof: programs: [0-9]* reused, [0-9]* new, [0-9]* programs served, [0-9]* built" build.log || true)
[[ "$proof" =~ programs:\ ([0-9]+)\ reused,\ 0\ new,\ ([0-9]+)\ programs\ served,\ 0\ built ]] \
  || { cat build.log >&2; fail "hit proof: expected 'programs: N reused, 0 new, M programs served, 0 built', got '$proof'"; }
[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -gt 0 ] || fail "hit proof: nothing reused or served ($proof)"

step "install, env: OPENCL_LAYERS and PREWARM_LAYER=serve"
"$PREWARM_RUNTIME" install bundle --trust keys/test_only_layer.pub --root "$SCRATCH/root" > /dev/null 2>&1
"$PREWARM_RUNTIME" env --root "$SCRATCH/root" > env.sh
grep -q "^export OPENCL_LAYERS='.*libprewarm_opencl_layer.so'" env.sh || { cat env.sh >&2; fail "env does not enable the layer"; }
grep -q "^export PREWARM_LAYER='serve'" env.sh || fail "env does not select serve mode"

step "exec: the application is served from the installed records"
export POCL_CACHE_DIR="$SCRATCH/pocl"
PREWARM_LAYER_AUDIT_LOG="$SCRATCH/audit.jsonl" "$PREWARM_RUNTIME" exec --root "$SCRATCH/root" -- "$APP" build > out.txt 2> exec.err \
  || { cat exec.err >&2; fail "exec"; }
grep -q "^ok build$" out.txt || fail "the application did not finish"
grep -q '"event":"hit"' audit.jsonl || { cat audit.jsonl >&2; fail "no hit"; }
! grep -q '"event":"miss"' audit.jsonl || { cat audit.jsonl >&2; fail "a miss after recording"; }
pass
