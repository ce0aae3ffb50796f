#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `prewarm plan` and `prewarm build` agree on the helper programs a job on the
# virtual Intel device needs (issue 40): a user who copies the `prewarm`
# binary alone gets, from `plan`, the missing prewarm-cl-replay named per job
# with where it was looked for; the build then skips the command job with the
# same reason (instead of failing it) and builds the built-in job without its
# NEO slice, warning once. With the helper beside the binary, nothing is
# named. A CPU-only manifest never mentions the helper (issue 41: the build
# warned twice that it was missing).
# Cost: plans only, and one small AOT build for the Intel root's ocloc (~20 s).
set -euo pipefail
: "${PREWARM:?}" "${CL_REPLAY:?}"
source "$(dirname "$0")/../lib.sh"

require_intel_root
export PREWARM_INTEL_ROOT=$ROOT
unset PREWARM_CL_REPLAY PREWARM_OCLOC
make_scratch plan-helpers
cd "$SCRATCH"
mkdir alone
cp "$PREWARM" alone/prewarm

cat >intel.yaml <<'EOF'
version: 1
models:
  - name: gptq-linear
    preset: gptq-linear
  - name: app
    command:
      argv: [/bin/true]
      kinds: [neo]
precisions: [fp32]
targets: [arc-b580]
bundle:
  channel: default
  expires: 90d
EOF
cat >cpu.yaml <<'EOF'
version: 1
models:
  - name: gptq-linear
    preset: gptq-linear
precisions: [fp32]
targets: [cpu]
bundle:
  channel: default
  expires: 90d
EOF

# plan_field FILE JOB FIELD: one field of a job of `plan --json`.
plan_field() {
  python3 -c 'import json,sys; print({j["id"]: j for j in json.load(open(sys.argv[1]))["jobs"]}[sys.argv[2]][sys.argv[3]])' "$@"
}

step "plan, prewarm alone: the command job names the missing helper and where it was looked for"
expect_exit 0 alone/prewarm plan intel.yaml --json >plan-alone.json
grep '"reason"' plan-alone.json
[ "$(plan_field plan-alone.json arc-b580/app strategy)" = skip ] || fail "the command job is not skipped without the helper"
command_reason=$(plan_field plan-alone.json arc-b580/app reason)
case "$command_reason" in
  *"runs on a virtual bmg"*"prewarm-cl-replay not found"*"$SCRATCH/alone/prewarm-cl-replay"*PREWARM_CL_REPLAY*) ;;
  *) fail "the command job's reason does not name the helper and where it was looked for: $command_reason" ;;
esac
[ "$(plan_field plan-alone.json arc-b580/gptq-linear/fp32 strategy)" = aot ] || fail "the built-in job is not aot"
case "$(plan_field plan-alone.json arc-b580/gptq-linear/fp32 reason)" in
  *"without its NEO slice: prewarm-cl-replay not found"*"$SCRATCH/alone/prewarm-cl-replay"*) ;;
  *) fail "the built-in job's reason does not say it ships no NEO slice for want of the helper" ;;
esac
# The text plan says the same.
expect_exit 0 alone/prewarm plan intel.yaml >plan-alone.txt
grep -q "arc-b580/app .*skip .*prewarm-cl-replay not found" plan-alone.txt || fail "the text plan does not name it"

step "build, prewarm alone: the same skip, the built-in job without its NEO slice, one warning"
alone/prewarm keygen --out keys/test_only_helpers >/dev/null
expect_exit 0 alone/prewarm build intel.yaml --key keys/test_only_helpers.key --out bundle --json report.json
grep -E "prewarm-cl-replay|skip|ok " <<<"$LAST_STDERR" || true
python3 - "$command_reason" <<'PY' || fail "the build's report"
import json, sys
jobs = {j["id"]: j for j in json.load(open("report.json"))["jobs"]}
app = jobs["arc-b580/app"]
assert app["state"] == "skipped" and app["reason"] == sys.argv[1], app
builtin = jobs["arc-b580/gptq-linear/fp32"]
assert builtin["state"] == "ok" and "neo" not in builtin.get("report", {}), builtin
PY
warnings=$(echo "$LAST_STDERR" | grep -c "virtual Intel devices not used" || true)
[ "$warnings" = 1 ] || fail "the build warned $warnings times that the virtual device is not used (once expected)"

step "plan, the helper beside prewarm: nothing named"
cp "$CL_REPLAY" alone/prewarm-cl-replay
expect_exit 0 alone/prewarm plan intel.yaml --json >plan-beside.json
[ "$(plan_field plan-beside.json arc-b580/app strategy)" = aot ] || fail "the command job is not planned with the helper beside"
if grep -q "prewarm-cl-replay" plan-beside.json; then
  fail "the plan names the helper although it is beside prewarm"
fi
rm alone/prewarm-cl-replay

step "CPU only, prewarm alone: neither plan nor build mentions the helper"
expect_exit 0 alone/prewarm plan cpu.yaml >plan-cpu.txt
if cat plan-cpu.txt - <<<"$LAST_STDERR" | grep -q "prewarm-cl-replay\|virtual Intel"; then
  fail "a CPU-only plan mentions the virtual device's helper"
fi
if command -v clinfo >/dev/null && clinfo -l 2>/dev/null | grep -q Device; then
  expect_exit 0 alone/prewarm build cpu.yaml --key keys/test_only_helpers.key --out cpu-bundle
  if echo "$LAST_STDERR" | grep -q "prewarm-cl-replay\|virtual Intel"; then
    echo "$LAST_STDERR" | grep "prewarm-cl-replay\|virtual Intel"
    fail "a CPU-only build mentions the virtual device's helper"
  fi
else
  echo "no OpenCL CPU device: the CPU-only build is not run"
fi
pass
