# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the shell integration tests. Source it; it defines:
#   step, fail, pass, skip, make_scratch, expect_exit, assert_stderr_contains,
#   tree_hash, flip_byte, assert_no_staging, require_opencl_device, require_intel_root,
#   intel_library_path, intel_extensions_value
LAST_STDERR=""

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $(basename "$0")"; exit 0; }
skip() { echo "SKIP: $*"; exit 77; }

# make_scratch NAME: a fresh directory in SCRATCH, removed when the test exits
# (not in a subshell: the trap belongs to the test's shell).
make_scratch() {
  SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-$1.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$SCRATCH'" EXIT
}

# expect_exit CODE CMD...: run CMD, keep its stderr in LAST_STDERR, check the exit code.
expect_exit() {
  local want=$1; shift
  local err rc=0
  err=$(mktemp)
  "$@" 2> "$err" || rc=$?
  LAST_STDERR=$(cat "$err"); rm -f "$err"
  if [ "$rc" -ne "$want" ]; then
    echo "--- stderr of: $*" >&2; echo "$LAST_STDERR" >&2
    fail "exit $rc, expected $want: $*"
  fi
}

assert_stderr_contains() {
  grep -qF -- "$1" <<< "$LAST_STDERR" || { echo "$LAST_STDERR" >&2; fail "stderr lacks '$1'"; }
}

# A digest of a tree: every path, type, mode, size and file content.
tree_hash() {
  [ -e "$1" ] || { echo "absent"; return; }
  (cd "$1" && { find . -printf '%p %y %m %s\n' | LC_ALL=C sort
                find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum; } | sha256sum | cut -d' ' -f1)
}

flip_byte() {
  python3 - "$1" "$2" <<'PY'
import sys
path, offset = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(offset); b = f.read(1); f.seek(offset); f.write(bytes([b[0] ^ 0x01]))
PY
}

assert_no_staging() {
  if find "$1" -name 'staging*' -o -name '*.tmp*' 2>/dev/null | grep -q .; then
    find "$1" -name 'staging*' -o -name '*.tmp*' >&2
    fail "staging left behind under $1"
  fi
}

require_opencl_device() {
  command -v clinfo > /dev/null || skip "clinfo not installed"
  clinfo -l 2>/dev/null | grep -q Device || skip "no OpenCL device (install pocl-opencl-icd)"
}

# require_intel_root [ocloc]: sets ROOT to the Intel root (PREWARM_INTEL_ROOT,
# else setup.sh's default) or skips the test; with "ocloc", also its ocloc on
# host paths.
require_intel_root() {
  ROOT=${PREWARM_INTEL_ROOT:-/var/cache/prewarm/intel-sid}
  [ -f "$ROOT/.complete" ] || skip "no Intel root at $ROOT (make it with ./setup.sh intel-root)"
  if [ "${1:-}" = ocloc ]; then
    [ -x "$ROOT/host-bin/ocloc" ] || skip "no $ROOT/host-bin/ocloc (the root's ocloc on host paths)"
  fi
}

# intel_library_path: --library-path for a program on the Intel root as
# prewarm runs its virtual devices (virtual_device/intel_root.hpp): first a
# directory whose libva.so.2 is no library, so NEO lists no libva extension
# whatever this host has installed, then the root's libraries.
intel_library_path() {
  local pins="${SCRATCH:-${TMPDIR:-/tmp}}/prewarm-intel-pins"
  mkdir -p "$pins" && : > "$pins/libva.so.2"
  echo "$pins:$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/lib/x86_64-linux-gnu"
}

# intel_extensions_value PRODUCT PCI-ID: on stdout, intel.opencl-extensions
# of the Intel root's NEO posing as that device (ProductFamilyOverride,
# ForceDeviceId), from the root's clinfo: the count and the first 16 hex
# digits of SHA-256 of CL_DEVICE_EXTENSIONS' words joined by one space
# (base/device_properties.hpp). For test-double hosts that report it.
intel_extensions_value() {
  local vendors
  vendors=$(mktemp -d)
  echo "$ROOT/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so" > "$vendors/neo.icd"
  env -u LD_LIBRARY_PATH OCL_ICD_VENDORS="$vendors" NEOReadDebugKeys=1 SetCommandStreamReceiver=5 UseAubStream=0 \
    HardwareInfoOverride=1x5x4 UseBindlessMode=0 ProductFamilyOverride="$1" ForceDeviceId="${2#0x}" \
    "$ROOT/lib64/ld-linux-x86-64.so.2" --library-path "$(intel_library_path)" \
    "$ROOT/usr/bin/clinfo" --raw 2>/dev/null | python3 -c '
import hashlib, sys
for line in sys.stdin:
    parts = line.split(None, 2)
    if len(parts) == 3 and parts[1] == "CL_DEVICE_EXTENSIONS":
        words = " ".join(parts[2].split())
        print(f"{len(parts[2].split())}:{hashlib.sha256(words.encode()).hexdigest()[:16]}")
        break'
  rm -rf "$vendors"
}

# preset_manifest MODEL PRESET PRECISIONS TARGETS: on stdout, a manifest of one
# built-in model (PRESET, named MODEL) at the small shapes the Intel tests
# build: batch 1, one prefill of 16, 2 decode steps. PRECISIONS and TARGETS
# are YAML lists ("[fp32]", "[arc-b580]").
preset_manifest() {
  cat <<EOF
version: 1
models:
  - name: $1
    preset: $2
precisions: $3
shapes:
  batch_sizes: [1]
  prefill_lengths: [16]
  decode_steps: 2
targets: $4
bundle:
  channel: default
  expires: 90d
EOF
}

# FILE KIND FIELD: one kind's FIELD in an audit's JSON (exec --audit, status
# --audit). PYTHON, where the script sets one, else python3.
audit_field() {
  "${PYTHON:-python3}" -c 'import json,sys; a=json.load(open(sys.argv[1])); print([k for k in a["kinds"] if k["kind"]==sys.argv[2]][0][sys.argv[3]])' "$@"
}
# FILE FIELD: FIELD of FILE's last line, a JSON object (a warm-up's result).
last_json_field() {
  "${PYTHON:-python3}" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$@"
}
