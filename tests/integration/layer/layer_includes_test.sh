#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A program's key covers the headers its source includes from disk
# (runtime/store/program_includes.hpp), on the real loader and PoCL device:
# a header changed after the recording (a new application version over a
# persistent root) is a miss that computes the new numbers, never the old
# binary; a computed include the layer cannot expand is passed through
# (never served, never recorded). Costs eleven runs of layer_test_app (about
# 35 s on this 2-core machine under load).
# Needs: LAYER, APP (set by CMake).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
require_opencl_device
make_scratch layer-includes
export POCL_CACHE_DIR="$SCRATCH/pocl"
cd "$SCRATCH"   # `-I hdr` is relative: resolved against the working directory

fresh() { rm -rf "$POCL_CACHE_DIR"; }
with_layer() { # MODE AUDIT CMD...
  local mode=$1 audit=$2; shift 2
  fresh
  OPENCL_LAYERS="$LAYER" PREWARM_LAYER="$mode" PREWARM_PROGRAM_STORE="$SCRATCH/store" PREWARM_LAYER_AUDIT_LOG="$audit" \
    PREWARM_LAYER_LOG=1 "$@"
}
count() { grep -c "\"event\":\"$1\"" "$2" || true; }

mkdir -p first hdr
DIRS="first -I hdr"   # layer_test_app builds with "-I $DIRS": two directories, first empty
printf '#include "offset.h"\n#define VALUE 3\n' > hdr/value.h
printf '#define OFFSET 7\n' > hdr/offset.h   # found beside value.h: a nested include

step "recorded with the first headers, then served: a hit, the same numbers"
fresh; "$APP" include "$DIRS" > v1.plain 2>/dev/null
grep -q "^first 7 10$" v1.plain || { cat v1.plain >&2; fail "the application did not compute 3*i+7"; }
with_layer record "" "$APP" include "$DIRS" > v1.record 2> v1.record.err
diff v1.plain v1.record || fail "recording changed the output"
[ -n "$(find store -name '*.bin')" ] || { cat v1.record.err >&2; fail "nothing recorded"; }
[ -z "$(find store -name '*.source')" ] || fail "a source that includes files was kept for ahead-of-time compiles"
with_layer audit v1.audit "$APP" include "$DIRS" > v1.serve 2>/dev/null
diff v1.plain v1.serve || fail "serving changed the output"
[ "$(count hit v1.audit)" = 1 ] && [ "$(count miss v1.audit)" = 0 ] || { cat v1.audit >&2; fail "not served"; }

step "the nested header changes after the recording: a miss, the new numbers"
printf '#define OFFSET 100\n' > hdr/offset.h
fresh; "$APP" include "$DIRS" > v2.plain 2>/dev/null
grep -q "^first 100 103$" v2.plain || { cat v2.plain >&2; fail "the plain run did not see the new header"; }
with_layer audit v2.audit "$APP" include "$DIRS" > v2.serve 2>/dev/null
diff v2.plain v2.serve || fail "served the binary of the old header: the application computed the old numbers"
[ "$(count hit v2.audit)" = 0 ] && [ "$(count miss v2.audit)" = 1 ] || { cat v2.audit >&2; fail "the changed header was not a miss"; }
grep -q '"reason":"not in the store"' v2.audit || { cat v2.audit >&2; fail "the miss does not say why"; }

step "a header shadowing the recorded one earlier in the search: a miss, its numbers"
printf '#define OFFSET 7\n' > hdr/offset.h   # back to the recorded content: a hit again
with_layer audit v3.audit "$APP" include "$DIRS" > v3.serve 2>/dev/null
diff v1.plain v3.serve || fail "the recorded headers back: other numbers"
[ "$(count hit v3.audit)" = 1 ] || { cat v3.audit >&2; fail "the recorded headers back: not served"; }
printf '#include "offset.h"\n#define VALUE 5\n' > first/value.h   # found before hdr/value.h
fresh; "$APP" include "$DIRS" > v4.plain 2>/dev/null
grep -q "^first 7 12$" v4.plain || { cat v4.plain >&2; fail "the compiler did not take first/value.h (the test's premise)"; }
with_layer audit v4.audit "$APP" include "$DIRS" > v4.serve 2>/dev/null
diff v4.plain v4.serve || fail "a shadowing header was served the old binary"
[ "$(count miss v4.audit)" = 1 ] || { cat v4.audit >&2; fail "a shadowing header was not a miss"; }
rm first/value.h

step "a computed include the layer cannot expand (token pasting): passed through, never recorded, said so"
rm -rf store
with_layer record "" "$APP" include "$DIRS" macro > m.record 2> m.record.err
grep -q "^first 7 10$" m.record || { cat m.record >&2; fail "the application failed under the layer"; }
[ -z "$(find store -name '*.bin' 2>/dev/null)" ] || fail "a program with a computed include was recorded"
grep -q "passing a build through (never served, never recorded): a computed #include through JOIN, which pastes" m.record.err \
  || { cat m.record.err >&2; fail "no operator line for the pass-through"; }
with_layer audit m.audit "$APP" include "$DIRS" macro > /dev/null 2>&1
grep -q '"event":"miss".*"passed_through":true' m.audit && grep -q '"reason":"passed through: a computed #include through JOIN' m.audit \
  || { cat m.audit >&2; fail "the audit log does not say the program was passed through"; }
pass
