#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The OpenCL layer through the real ocl-icd loader on the real PoCL device.
# Each scenario of layer_test_app runs three times with a fresh PoCL cache:
# plain, recorded, served; the served run must compute the same results, the
# audit log must call it a hit, and a corrupt record must fall back to a
# normal build (a miss with the reason), the application unaware.
# Needs: LAYER, PRELOAD, APP (set by CMake).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
require_opencl_device
make_scratch layer
export POCL_CACHE_DIR="$SCRATCH/pocl"   # PoCL's own cache: emptied before each run

fresh() { rm -rf "$POCL_CACHE_DIR"; }
with_layer() { # MODE STORE AUDIT CMD...
  local mode=$1 store=$2 audit=$3; shift 3
  fresh
  OPENCL_LAYERS="$LAYER" PREWARM_LAYER="$mode" PREWARM_PROGRAM_STORE="$store" PREWARM_LAYER_AUDIT_LOG="$audit" \
    PREWARM_LAYER_LOG=1 "$@"
}
count() { grep -c "\"event\":\"$1\"" "$2" || true; }

for scenario in build compile-link "threads 3" dlopen program-first; do
  name=${scenario// /-}
  step "$scenario: plain, recorded, served"
  store="$SCRATCH/store-$name"
  # A run that exits non-zero says which one and shows its stderr (set -e alone would end the test
  # without a word: seen once in a CI rehearsal, in "threads 3", not reproduced in 6 runs since).
  fresh; "$APP" $scenario > "$SCRATCH/$name.plain" 2> "$SCRATCH/$name.plain.err" \
    || { cat "$SCRATCH/$name.plain.err" >&2; fail "$scenario: the plain run failed"; }
  with_layer record "$store" "" "$APP" $scenario > "$SCRATCH/$name.record" 2> "$SCRATCH/$name.record.err" \
    || { cat "$SCRATCH/$name.record.err" >&2; fail "$scenario: the recording run failed"; }
  diff "$SCRATCH/$name.plain" "$SCRATCH/$name.record" || fail "$scenario: recording changed the application's output"
  [ -n "$(find "$store" -name '*.bin')" ] || { cat "$SCRATCH/$name.record.err" >&2; fail "$scenario: nothing recorded"; }
  with_layer audit "$store" "$SCRATCH/$name.audit" "$APP" $scenario > "$SCRATCH/$name.serve" 2> "$SCRATCH/$name.serve.err" \
    || { cat "$SCRATCH/$name.serve.err" >&2; fail "$scenario: the served run failed"; }
  diff "$SCRATCH/$name.plain" "$SCRATCH/$name.serve" || fail "$scenario: serving changed the application's output"
  [ "$(count miss "$SCRATCH/$name.audit")" = 0 ] || { cat "$SCRATCH/$name.audit" >&2; fail "$scenario: misses after a full record"; }
  [ "$(count hit "$SCRATCH/$name.audit")" -ge 1 ] || fail "$scenario: no hit in the audit log"
done

step "compile + link: the compiles were deferred and the link served (no compile ran)"
grep -q '"stage":"compile"' "$SCRATCH/compile-link.audit" || fail "no compile event"
grep -q '"event":"hit".*"kernels":\["apply"\].*"stage":"link"' "$SCRATCH/compile-link.audit" \
  || { cat "$SCRATCH/compile-link.audit" >&2; fail "the link was not a hit naming kernel apply"; }

step "threads: one record and one hit per thread's program"
[ "$(count hit "$SCRATCH/threads-3.audit")" = 3 ] || fail "expected 3 hits"

step "PoCL: captured at release, after the kernels ran (the binary holds their work-group functions)"
grep -q "at release" "$SCRATCH/build.record.err" || { cat "$SCRATCH/build.record.err" >&2; fail "no capture at release"; }

step "audit line: key, kernels, build time"
line=$(head -1 "$SCRATCH/build.audit")
python3 - "$line" <<'PY'
import json, sys
event = json.loads(sys.argv[1])
assert event["event"] == "hit", event
assert len(event["key"]) == 64, event
assert event["kernels"] == ["scale", "offset"], event
assert isinstance(event["build_ms"], (int, float)), event
PY

step "a corrupt stored binary: a miss with the reason, a normal build, the same results"
bin=$(find "$SCRATCH/store-build" -name '*.bin' | head -1)
printf 'garbage' >> "$bin"
with_layer audit "$SCRATCH/store-build" "$SCRATCH/corrupt.audit" "$APP" build > "$SCRATCH/corrupt.out" 2> "$SCRATCH/corrupt.err"
diff "$SCRATCH/build.plain" "$SCRATCH/corrupt.out" || fail "a corrupt record changed the output"
grep -q '"event":"miss".*"reason":"stored record [0-9a-f]* rejected: the binary' "$SCRATCH/corrupt.audit" \
  || { cat "$SCRATCH/corrupt.audit" >&2; fail "the miss does not say the record was rejected"; }
grep -q "building .* normally" "$SCRATCH/corrupt.err" || fail "no operator line for the fallback"

step "a binary the driver refuses (valid digest, wrong bytes): fallback"
meta="${bin%.bin}.meta"
printf 'not a pocl binary' > "$bin"
python3 - "$meta" "$bin" <<'PY'
import hashlib, sys
meta, binary = sys.argv[1], sys.argv[2]
lines = open(meta).read().splitlines()
digest = hashlib.sha256(open(binary, "rb").read()).hexdigest()
lines[-1] = "binary-sha256 " + digest
open(meta, "w").write("\n".join(lines) + "\n")
PY
with_layer audit "$SCRATCH/store-build" "$SCRATCH/refused.audit" "$APP" build > "$SCRATCH/refused.out" 2>/dev/null
diff "$SCRATCH/build.plain" "$SCRATCH/refused.out" || fail "a refused binary changed the output"
grep -q '"event":"miss".*the driver refused\|"event":"miss".*did not build' "$SCRATCH/refused.audit" \
  || { cat "$SCRATCH/refused.audit" >&2; fail "the miss does not say the driver refused the binary"; }

step "different build options: a miss, never a wrong hit"
with_layer audit "$SCRATCH/store-threads-3" "$SCRATCH/options.audit" "$APP" threads 4 > /dev/null 2>&1
[ "$(count hit "$SCRATCH/options.audit")" = 3 ] && [ "$(count miss "$SCRATCH/options.audit")" = 1 ] \
  || { cat "$SCRATCH/options.audit" >&2; fail "thread 4's options were not a miss"; }

step "two devices (POCL_DEVICES=\"pthread basic\"): one record per device, both served"
export POCL_DEVICES="pthread basic"
store="$SCRATCH/store-devices"
fresh; "$APP" devices > "$SCRATCH/devices.plain" 2>/dev/null
if grep -q "^devices 2$" "$SCRATCH/devices.plain"; then
  with_layer record "$store" "" "$APP" devices > /dev/null 2>&1
  [ "$(find "$store" -name '*.bin' | wc -l)" = 2 ] || fail "expected two records (one per device)"
  with_layer audit "$store" "$SCRATCH/devices.audit" "$APP" devices > "$SCRATCH/devices.serve" 2>/dev/null
  diff "$SCRATCH/devices.plain" "$SCRATCH/devices.serve" || fail "two-device serving changed the output"
  grep -q '"event":"hit".*"keys":\["[0-9a-f]*","[0-9a-f]*"\]' "$SCRATCH/devices.audit" || fail "the hit does not name two keys"
else
  echo "note: PoCL exposes one device here; the two-device case did not run"
fi
unset POCL_DEVICES

step "a program kept until exit (as OpenCV keeps its programs): captured at exit, the application unharmed, cold and warm"
# Reading a cold program's binary at exit makes PoCL run LLVM's code
# generator. From an atexit handler that crashed in about half the runs
# (LLVM's lazily made statics were already destroyed); the layer captures
# from the main thread's first step in exit() instead (program_capture.hpp).
# 6 cold runs: the old handler passed all of them in 1 of 64 tries.
fresh; "$APP" exit > "$SCRATCH/exit.plain" 2>/dev/null
for run in 1 2 3 4 5 6 warm1 warm2 warm3; do
  case $run in warm*) ;; *) fresh ;; esac   # warm: PoCL's cache as the run before left it
  rm -rf "$SCRATCH/store-exit"
  rc=0
  OPENCL_LAYERS="$LAYER" PREWARM_LAYER=record PREWARM_PROGRAM_STORE="$SCRATCH/store-exit" PREWARM_LAYER_LOG=1 \
    "$APP" exit > "$SCRATCH/exit.record" 2> "$SCRATCH/exit.record.err" || rc=$?
  [ "$rc" = 0 ] || { cat "$SCRATCH/exit.record.err" >&2; fail "recording a program kept until exit: the application exited $rc (run $run)"; }
  diff "$SCRATCH/exit.plain" "$SCRATCH/exit.record" || fail "recording changed the output (run $run)"
  grep -q "recorded .*(at exit," "$SCRATCH/exit.record.err" || { cat "$SCRATCH/exit.record.err" >&2; fail "nothing captured at exit (run $run)"; }
done
with_layer audit "$SCRATCH/store-exit" "$SCRATCH/exit.audit" "$APP" exit > "$SCRATCH/exit.serve" 2>/dev/null
diff "$SCRATCH/exit.plain" "$SCRATCH/exit.serve" || fail "serving the exit capture changed the output"
[ "$(count hit "$SCRATCH/exit.audit")" = 1 ] && [ "$(count miss "$SCRATCH/exit.audit")" = 0 ] \
  || { cat "$SCRATCH/exit.audit" >&2; fail "the program captured at exit was not served"; }
step "PREWARM_LAYER_CAPTURE=release: no capture at exit"
with_layer record "$SCRATCH/store-noexit" "" env PREWARM_LAYER_CAPTURE=release "$APP" exit > /dev/null 2> "$SCRATCH/noexit.err"
! grep -q "recorded .*(at exit," "$SCRATCH/noexit.err" || fail "captured at exit although PREWARM_LAYER_CAPTURE=release"

step "a FIFO named as the audit log: the application neither hangs nor fails, the operator is told"
mkfifo "$SCRATCH/audit.fifo"
fresh
timeout 60 env OPENCL_LAYERS="$LAYER" PREWARM_LAYER=audit PREWARM_PROGRAM_STORE="$SCRATCH/store-build" \
  PREWARM_LAYER_AUDIT_LOG="$SCRATCH/audit.fifo" PREWARM_LAYER_LOG=1 "$APP" build > "$SCRATCH/fifo.out" 2> "$SCRATCH/fifo.err" \
  || { cat "$SCRATCH/fifo.err" >&2; fail "the application failed or hung with a FIFO as the audit log (status $?)"; }
diff "$SCRATCH/build.plain" "$SCRATCH/fifo.out" || fail "a FIFO audit log changed the output"
grep -q "the audit log .*audit.fifo is a FIFO, not a regular file" "$SCRATCH/fifo.err" \
  || { cat "$SCRATCH/fifo.err" >&2; fail "no operator line naming the FIFO"; }
[ -p "$SCRATCH/audit.fifo" ] || fail "the FIFO was replaced"

step "nothing stored: serve mode builds normally, every build a miss"
with_layer audit "$SCRATCH/empty" "$SCRATCH/empty.audit" "$APP" build > "$SCRATCH/empty.out" 2>/dev/null
diff "$SCRATCH/build.plain" "$SCRATCH/empty.out" || fail "an empty store changed the output"
grep -q '"event":"miss".*"reason":"not in the store"' "$SCRATCH/empty.audit" || fail "no miss for an empty store"

step "LD_PRELOAD build: linked applications are served, dlopen users are not (documented)"
fresh
LD_PRELOAD="$PRELOAD" PREWARM_LAYER=audit PREWARM_PROGRAM_STORE="$SCRATCH/store-compile-link" \
  PREWARM_LAYER_AUDIT_LOG="$SCRATCH/preload.audit" "$APP" compile-link > "$SCRATCH/preload.out" 2>/dev/null
diff "$SCRATCH/compile-link.plain" "$SCRATCH/preload.out" || fail "the preload build changed the output"
grep -q '"event":"hit".*"stage":"link"' "$SCRATCH/preload.audit" || fail "the preload build did not serve the link"
fresh
LD_PRELOAD="$PRELOAD" PREWARM_LAYER=audit PREWARM_PROGRAM_STORE="$SCRATCH/store-dlopen" \
  PREWARM_LAYER_AUDIT_LOG="$SCRATCH/preload-dlopen.audit" "$APP" dlopen > /dev/null 2>&1
[ ! -s "$SCRATCH/preload-dlopen.audit" ] || fail "the preload build saw a dlopen user's calls (the layer's reason to exist changed)"

step "layer off (no PREWARM_LAYER): nothing written"
fresh; OPENCL_LAYERS="$LAYER" PREWARM_PROGRAM_STORE="$SCRATCH/off" "$APP" build > "$SCRATCH/off.out" 2>/dev/null
diff "$SCRATCH/build.plain" "$SCRATCH/off.out" || fail "the passive layer changed the output"
[ ! -e "$SCRATCH/off" ] || fail "the passive layer wrote a store"

if command -v clpeak > /dev/null; then
  step "clpeak --kernel-latency (Debian, unmodified): recorded, then served"
  with_layer record "$SCRATCH/store-clpeak" "" clpeak --kernel-latency > /dev/null 2>&1
  with_layer audit "$SCRATCH/store-clpeak" "$SCRATCH/clpeak.audit" clpeak --kernel-latency > "$SCRATCH/clpeak.out" 2>/dev/null
  grep -q "Kernel launch latency" "$SCRATCH/clpeak.out" || fail "clpeak did not run"
  [ "$(count hit "$SCRATCH/clpeak.audit")" -ge 1 ] && [ "$(count miss "$SCRATCH/clpeak.audit")" = 0 ] \
    || { cat "$SCRATCH/clpeak.audit" >&2; fail "clpeak was not served"; }
fi
pass
