#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Triton's group files name a kernel's files by absolute path, so a cache
# installed elsewhere than it was captured missed on every kernel, while the
# hit proof, reading the originals, said it hit (audit/triton_groups.hpp):
#   1. build (kinds: [triton], verify: require): the proof, which cannot reach
#      the capture, hits on its relocated copy;
#   2. install at another path: the group names the installed files, never
#      the build's staging;
#   3. exec --audit: the kernel is cached, 0 new, and the proof's counts are
#      the audit's.
# The program is Triton's own FileCacheManager where PREWARM_TEST_TRITON_PYTHON
# names a Python with triton (it imports without a GPU), else a stand-in with
# its group semantics. About 3 s. Env: PREWARM, PREWARM_RUNTIME.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
[ -n "${PREWARM:-}" ] && [ -n "${PREWARM_RUNTIME:-}" ] || skip "prewarm or prewarm-runtime not built"
require_opencl_device # the cpu target runs on PoCL
PYTHON=${PREWARM_TEST_TRITON_PYTHON:-/usr/bin/python3}
SCRIPT="$(cd "$(dirname "$0")" && pwd)/triton_group_standin.py"
make_scratch triton-groups
"$PREWARM" keygen --out "$SCRATCH/test_only_triton" > /dev/null 2>&1 || fail "keygen failed"
cat > "$SCRATCH/m.yaml" <<YAML
version: 1
models:
  - name: tritonk
    command:
      argv: [$PYTHON, $SCRIPT]
      kinds: [triton]
      verify: require
precisions: [fp32]
targets: [cpu]
YAML

step "build: the proof hits on its relocated copy"
"$PREWARM" build "$SCRATCH/m.yaml" --key "$SCRATCH/test_only_triton.key" --out "$SCRATCH/b" \
  > /dev/null 2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "build failed"; }
proof=$(grep -o "hit proof: triton: [0-9]* reused, [0-9]* new" "$SCRATCH/build.err") \
  || { cat "$SCRATCH/build.err" >&2; fail "no triton proof line"; }
echo "$proof"
[[ "$proof" =~ triton:\ ([0-9]+)\ reused,\ 0\ new ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "the proof did not hit: $proof"
proof_reused=${BASH_REMATCH[1]}

step "install elsewhere: the groups name the installed version's files"
PREWARM_PYTHON=$PYTHON "$PREWARM_RUNTIME" install "$SCRATCH/b" --trust "$SCRATCH/test_only_triton.pub" \
  --root "$SCRATCH/root" > /dev/null 2> "$SCRATCH/install.err" || { cat "$SCRATCH/install.err" >&2; fail "install failed"; }
group="$SCRATCH/root/triton/KEY0123/__grp__k.json"
# The version's own directory (what env/exec export), never ROOT/triton, which
# the next install re-points while this application may still run.
version=$(sed -n 's/^version //p' "$SCRATCH/root/.prewarm/installed")
[ -n "$version" ] || fail "no version in the marker"
grep -qF "\"$SCRATCH/root/.prewarm/versions/$version/triton/KEY0123/k.cubin\"" "$group" \
  || { cat "$group" >&2; fail "the group does not name the installed version's file"; }
! grep -q "prewarm-build-\|staging" "$group" || { cat "$group" >&2; fail "the group still names the build's staging"; }

step "exec --audit: cached, nothing new, the proof's counts"
out=$("$PREWARM_RUNTIME" exec --root "$SCRATCH/root" --audit "$SCRATCH/a.json" -- "$PYTHON" "$SCRIPT" 2> "$SCRATCH/exec.err") \
  || { cat "$SCRATCH/exec.err" >&2; fail "the program failed under exec"; }
[ "$out" = cached ] || { cat "$SCRATCH/exec.err" >&2; fail "the installed kernel missed (program said '$out')"; }
grep "audit: triton:" "$SCRATCH/exec.err"
counts=$("$PYTHON" -c 'import json,sys; k=[k for k in json.load(open(sys.argv[1]))["kinds"] if k["kind"]=="triton"][0]; print(k["reused_files"], k["new_files"])' "$SCRATCH/a.json")
[ "$counts" = "$proof_reused 0" ] || fail "exec --audit measured '$counts' (reused new); the proof said $proof_reused reused, 0 new"
pass
