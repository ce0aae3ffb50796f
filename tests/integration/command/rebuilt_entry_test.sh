#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One meaning of "reused" (cache_usage.hpp), and the CPU as a target of its
# own (custom_capture.hpp), with a CPU application that never opens OpenCL:
# a shell program that keeps one compiled entry in its own cache and, on a
# warm start, reads it and then
#   reads:     only reads it (a true hit);
#   unlink:    deletes it and writes the same bytes again, as
#              onnxruntime-openvino does with its blob on the CPU;
#   truncate:  truncates it and writes the same bytes again in place.
# For each: the build's proof, exec --audit's since-install and this-run
# counts, and status --audit agree; a rebuilt entry is never reused, and
# `verify: require` fails its job. The slice requires the CPU (cpu.arch,
# cpu.isa-level), not PoCL; where this runs as root, an install in a private
# mount namespace that hides the OpenCL ICDs (an image without PoCL) selects
# the slice and the application hits there.
# No OpenCL program is built: about 10 s. Env: PREWARM, PREWARM_RUNTIME.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
[ -n "${PREWARM:-}" ] && [ -n "${PREWARM_RUNTIME:-}" ] || skip "prewarm or prewarm-runtime not built"
require_opencl_device # the build's cpu target runs where PoCL is
make_scratch rebuilt-entry
"$PREWARM" keygen --out "$SCRATCH/test_only_rebuilt" > /dev/null 2>&1 || fail "keygen failed"
# The application's own variable is no vetted cache-locating name: the
# operator's policy allows it (docs/reference/trust-policy.md).
printf 'version: 1\nkeys:\n  - file: test_only_rebuilt.pub\ninstall:\n  environment: [MY_APP_CACHE]\n' \
  > "$SCRATCH/policy.yaml"

cat > "$SCRATCH/app.sh" <<'APP'
#!/bin/sh
# A CPU application with its own cache: compiles its entry once; MODE says
# what a warm start does with it.
set -eu
entry="$MY_APP_CACHE/model.blob"
if [ -f "$entry" ]; then
  bytes=$(cat "$entry")
  case "$MODE" in
    unlink) rm "$entry"; printf '%s' "$bytes" > "$entry"; echo "rebuilt" >&2 ;;
    truncate) chmod u+w "$entry"; : > "$entry"; printf '%s' "$bytes" >> "$entry"; echo "rebuilt" >&2 ;;
  esac
else
  mkdir -p "$MY_APP_CACHE"
  printf 'compiled model for %s' "$(uname -m)" > "$entry"
  echo "compiled" >&2
fi
echo "result: $(cat "$entry")"
APP
chmod 755 "$SCRATCH/app.sh"

manifest() { # MODE VERIFY
  cat > "$SCRATCH/m-$1-$2.yaml" <<YAML
version: 1
models:
  - name: app-$1
    command:
      argv: [$SCRATCH/app.sh]
      env: {MODE: $1}
      kinds: []
      caches: [{name: app, variable: MY_APP_CACHE}]
      verify: $2
targets: [cpu]
YAML
}

counts() { # AUDIT-JSON SECTION: "reused new rewritten" of custom/app
  python3 - "$1" "$2" <<'PY'
import json, sys
audit = json.load(open(sys.argv[1]))
part = audit if sys.argv[2] == "since" else audit["this_run"]
k = [k for k in part["kinds"] if k["kind"] == "custom/app"][0]
print(k["reused_files"], k["new_files"], k["rewritten_files"])
PY
}

for mode in reads unlink truncate; do
  case "$mode" in
    reads) want="1 0 0" ;;
    *) want="0 1 1" ;;
  esac
  step "$mode: build with verify: warn"
  manifest "$mode" warn
  "$PREWARM" build "$SCRATCH/m-$mode-warn.yaml" --key "$SCRATCH/test_only_rebuilt.key" --out "$SCRATCH/b-$mode" \
    --json "$SCRATCH/build-$mode.json" > /dev/null 2> "$SCRATCH/build-$mode.err" \
    || { cat "$SCRATCH/build-$mode.err" >&2; fail "$mode: build failed"; }
  proof=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["jobs"][0]["report"]["hit_proof"]; k=[k for k in h["kinds"] if k["kind"]=="custom/app"][0]; print(k["reused_files"], k["new_files"], k["rewritten_files"])' "$SCRATCH/build-$mode.json")
  [ "$proof" = "$want" ] || { cat "$SCRATCH/build-$mode.err" >&2; fail "$mode: the proof counted '$proof' (reused new rewritten), expected '$want'"; }

  step "$mode: the slice requires the CPU, not PoCL"
  "$PREWARM" inspect "$SCRATCH/b-$mode" --json > "$SCRATCH/inspect-$mode.json"
  python3 - "$SCRATCH/inspect-$mode.json" <<'PY' || fail "$mode: the slice does not require the CPU alone"
import json, sys
slices = json.load(open(sys.argv[1]))["slices"]
assert len(slices) == 1, slices
keys = {r["key"] for r in slices[0]["requirements"]}
assert "cpu.arch" in keys, keys
assert not any(k.startswith("opencl.") or k == "vendor" for k in keys), keys
assert all(r["why"] for r in slices[0]["requirements"]), slices[0]["requirements"]
PY

  step "$mode: exec --audit and status --audit say what the proof said"
  root="$SCRATCH/root-$mode"
  "$PREWARM_RUNTIME" install "$SCRATCH/b-$mode" --trust "$SCRATCH/policy.yaml" --root "$root" \
    > /dev/null 2> "$SCRATCH/install-$mode.err" || { cat "$SCRATCH/install-$mode.err" >&2; fail "$mode: install failed"; }
  MODE=$mode "$PREWARM_RUNTIME" exec --root "$root" --audit "$SCRATCH/a-$mode.json" -- "$SCRATCH/app.sh" \
    > /dev/null 2> "$SCRATCH/exec-$mode.err" || { cat "$SCRATCH/exec-$mode.err" >&2; fail "$mode: exec failed"; }
  for section in since run; do
    got=$(counts "$SCRATCH/a-$mode.json" "$section")
    [ "$got" = "$want" ] || { cat "$SCRATCH/exec-$mode.err" >&2; fail "$mode: exec --audit ($section) counted '$got', the proof '$want'"; }
  done
  "$PREWARM_RUNTIME" status --root "$root" --audit --json > "$SCRATCH/status-$mode.json" 2> /dev/null \
    || fail "$mode: status --audit failed"
  python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["audit"], open(sys.argv[2], "w"))' \
    "$SCRATCH/status-$mode.json" "$SCRATCH/s-$mode.json"
  # Not watched: reuse is not known there, the new and rewritten files are.
  status=$(python3 -c 'import json,sys; k=[k for k in json.load(open(sys.argv[1]))["kinds"] if k["kind"]=="custom/app"][0]; print(k["new_files"], k["rewritten_files"])' "$SCRATCH/s-$mode.json")
  [ "$status" = "${want#* }" ] || fail "$mode: status --audit counted '$status' (new rewritten), the proof '${want#* }'"
done

step "verify: require fails a job whose entry is rebuilt with the same bytes"
for mode in unlink truncate; do
  manifest "$mode" require
  if "$PREWARM" build "$SCRATCH/m-$mode-require.yaml" --key "$SCRATCH/test_only_rebuilt.key" --out "$SCRATCH/r-$mode" \
       > /dev/null 2> "$SCRATCH/require-$mode.err"; then
    fail "$mode: verify: require passed a job whose application rebuilt its entry"
  fi
  grep -q "custom/app: 0 reused, 1 new (1 rewritten)" "$SCRATCH/require-$mode.err" \
    || { cat "$SCRATCH/require-$mode.err" >&2; fail "$mode: the refusal does not say 0 reused, 1 new (1 rewritten)"; }
done

if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null && [ -d /etc/OpenCL/vendors ]; then
  step "an image without PoCL (its ICDs hidden): the CPU slice installs and hits"
  out=$(unshare -m sh -c '
    mount -t tmpfs none /etc/OpenCL/vendors || exit 90
    MODE=reads "$0" install "$1" --trust "$2" --root "$3" > /dev/null 2> "$4" || exit 91
    MODE=reads "$0" exec --root "$3" --audit "$5" -- "$6"' \
    "$PREWARM_RUNTIME" "$SCRATCH/b-reads" "$SCRATCH/policy.yaml" "$SCRATCH/root-nopocl" \
    "$SCRATCH/nopocl-install.err" "$SCRATCH/a-nopocl.json" "$SCRATCH/app.sh" 2> "$SCRATCH/nopocl.err") || {
    rc=$?
    [ "$rc" = 90 ] && skip "cannot mount over /etc/OpenCL/vendors here"
    cat "$SCRATCH/nopocl-install.err" "$SCRATCH/nopocl.err" >&2
    fail "without PoCL the CPU slice did not install or run ($rc)"
  }
  [ "$out" = "result: compiled model for $(uname -m)" ] || fail "without PoCL the output differs: $out"
  [ "$(counts "$SCRATCH/a-nopocl.json" since)" = "1 0 0" ] || fail "without PoCL the entry was not reused"
fi

pass
