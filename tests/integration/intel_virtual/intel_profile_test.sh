#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `prewarm intel-profile` on the real Intel driver of the Intel root posing as
# a B580 (NEO's virtual-device keys in its environment, as a card needs
# none), checked against independent sources: the root's clinfo under the
# same keys, NEO's own key trace of a separate build, stat of the root's
# libigc and the root's package list. Never against prewarm's own output.
#
# With `sycl` (needs ./setup.sh intel-sycl): a manifest naming that profile
# makes the virtual device report the profile's device name, so dpctl's SYCL
# items land under std::hash of the device string holding it; the NEO slice
# records the IP version, and a host that reports another one is told which
# input differs.
# Not verifiable here (no Intel GPU): the values a real card reports.
# Cost: ~5 s (profile), ~30 s more with sycl, on 2 cores.
set -euo pipefail
: "${PREWARM:?}" "${CL_REPLAY:?}" "${ZE_PROBE:?}"
source "$(dirname "$0")/../lib.sh"
mode=${1:-profile}

require_intel_root
command -v clinfo > /dev/null || skip "clinfo not installed"
[ -x "$ROOT/usr/bin/clinfo" ] || skip "no clinfo in $ROOT"
if [ "$mode" = sycl ]; then
  : "${PREWARM_RUNTIME:?}"
  VENV=$ROOT/opt/prewarm-sycl
  [ -f "$VENV/.complete" ] || skip "no SYCL environment $VENV (make it with ./setup.sh intel-sycl)"
  WARMUP=$(cd "$(dirname "$0")" && pwd)/sycl_warmup.py
  export PREWARM_INTEL_ROOT=$ROOT
  unset PREWARM_OCLOC
fi
make_scratch intel-profile
cd "$SCRATCH"
export PREWARM_CL_REPLAY=$CL_REPLAY PREWARM_ZE_PROBE_BUILD=$ZE_PROBE
LIB=$ROOT/usr/lib/x86_64-linux-gnu
mkdir vendors && echo "$LIB/intel-opencl/libigdrcl.so" > vendors/neo.icd
on_virtual_b580() { # CMD...: under NEO's keys for a virtual B580 (as virtual_device.hpp sets them)
  env -u LD_LIBRARY_PATH NEOReadDebugKeys=1 SetCommandStreamReceiver=5 UseAubStream=0 HardwareInfoOverride=1x5x4 \
    UseBindlessMode=0 ProductFamilyOverride=bmg ForceDeviceId=E20B "$@"
}
# the root's loader, pinned as prewarm runs a virtual device (and as intel-profile measures one)
IN_ROOT=("$ROOT/lib64/ld-linux-x86-64.so.2" --library-path "$(intel_library_path)")

step "prewarm intel-profile on the virtual B580 (the root's driver)"
expect_exit 0 on_virtual_b580 "$PREWARM" intel-profile --out profile.yaml --driver-root "$ROOT"
cut -c1-160 profile.yaml | head -60

step "independent sources: the root's clinfo, NEO's trace of another build, the root's package list"
on_virtual_b580 OCL_ICD_VENDORS="$SCRATCH/vendors" "${IN_ROOT[@]}" "$ROOT/usr/bin/clinfo" --raw > clinfo.txt
mkdir trace && printf '__kernel void k(__global int* x) { x[0] = 2; }\n' > k.cl && printf 'k.cl\t-cl-mad-enable\n' > k.list
on_virtual_b580 OCL_ICD_VENDORS="$SCRATCH/vendors" BinaryCacheTrace=1 NEO_CACHE_DIR="$SCRATCH/trace" \
  "${IN_ROOT[@]}" "$CL_REPLAY" k.list > /dev/null
python3 - "$ROOT/.complete" <<'PY' || fail "the profile differs from the independent sources"
import glob, hashlib, json, re, sys
complete = open(sys.argv[1]).read()

def load(path):  # the YAML subset the profile is written in: maps, "- " lists, JSON-quoted or plain scalars
    lines = [l.rstrip("\n") for l in open(path) if l.strip() and not l.lstrip().startswith("#")]
    def scalar(text):
        text = text.strip()
        return json.loads(text) if text.startswith('"') else {"true": True, "false": False, "[]": [], "{}": {}}.get(text, text)
    def block(i, indent):
        if lines[i][indent:].startswith("- "):
            out = []
            while i < len(lines) and lines[i].startswith(" " * indent + "- "):
                lines[i] = " " * (indent + 2) + lines[i][indent + 2:]
                item, i = block(i, indent + 2)
                out.append(item)
            return out, i
        out = {}
        while i < len(lines) and len(lines[i]) - len(lines[i].lstrip()) == indent and not lines[i].lstrip().startswith("- "):
            key, _, rest = lines[i].strip().partition(":")
            i += 1
            if rest.strip():
                out[key] = scalar(rest)
            else:
                child = len(lines[i]) - len(lines[i].lstrip())
                out[key], i = block(i, child)
        return out, i
    return block(0, 0)[0]

p = load("profile.yaml")
def raw(name):  # clinfo --raw: "[platform/device] CL_NAME  value"
    for line in open("clinfo.txt"):
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[1] == name:
            return parts[2].strip() if len(parts) > 2 else ""
    raise KeyError(name)
extensions = " ".join(raw("CL_DEVICE_EXTENSIONS").split())
ip = int(raw("CL_DEVICE_IP_VERSION_INTEL"), 0)
trace = open(glob.glob("trace/*.trace")[0]).read()
section = lambda name: re.search(r"---- %s ----\n(.*?)(?=\n---- |\Z)" % re.escape(name), trace, re.S).group(1).strip()
package = lambda name: re.search(r"^%s (\S+)$" % re.escape(name), complete, re.M).group(1)
checks = {
    "target": (p["target"], "arc-b580"),
    "recorder.product": (p["recorder"]["product"], "bmg"),
    "device_name": (p["device_name"]["value"], raw("CL_DEVICE_NAME")),
    "opencl.extensions.measured": (p["opencl"]["extensions"]["measured"]["value"], extensions),
    "key.ip_version": (p["key"]["ip_version"]["value"], f"{ip >> 22}.{(ip >> 14) & 0xff}.{ip & 0x3f}"),
    "key.device_id": (p["key"]["device_id"]["value"], "0x%04x" % int(re.search(r"usDeviceID=(\d+)", trace).group(1))),
    "key.revision": (p["key"]["revision"]["value"], "0x%02x" % int(re.search(r"usRevId=(\d+)", trace).group(1))),
    "key.feature_table": (p["key"]["feature_table"]["value"], section("feature table")),
    "key.workaround_table": (p["key"]["workaround_table"]["value"], section("workaround table")),
    "opencl.bindless": (p["opencl"]["bindless"]["value"], "-cl-intel-use-bindless-mode" in section("internal options")),
    "level_zero.bindless": (p["level_zero"]["bindless"]["value"], False),   # UseBindlessMode=0 on this virtual device
    "opencl.extensions.add": (p["opencl"]["extensions"]["add"], []),       # a virtual device lists neither
}
for name in ("libigc2", "intel-opencl-icd", "libze-intel-gpu1"):
    checks["driver.packages." + name] = (p["driver"]["packages"][name], package(name))
bad = [f"{k}: profile {v[0]!r}, independent {v[1]!r}" for k, v in checks.items() if v[0] != v[1]]
assert not bad, "\n".join(bad)
assert "NEO's entry name recomputed with it is the name NEO wrote" in p["key"]["ip_version"]["source"], p["key"]["ip_version"]
for field in ("device_id", "revision", "ip_version", "feature_table"):
    assert "(a virtual device: NEO debug keys" in p["key"][field]["source"], p["key"][field]
    assert "ProductFamilyOverride=bmg" in p["key"][field]["source"], p["key"][field]
print(f"{len(checks)} values equal their independent source; unknown: {[u['field'] for u in p.get('unknown', [])]}")
print(f"the extension digest a host probe reports: {len(extensions.split())}:{hashlib.sha256(extensions.encode()).hexdigest()[:16]}")
PY

step "bad input: told before any build"
expect_exit 2 "$PREWARM" intel-profile --out no-such-dir/p.yaml --driver-root "$ROOT"
assert_stderr_contains "no directory no-such-dir"

[ "$mode" = sycl ] || pass

step "a manifest naming the profile: SYCL items land under the profile's device string"
name="Intel(R) Arc(TM) B580 Graphics [profile test]"   # not NEO's table name: the profile is what names it
sed "/^device_name:/{n;s/value: .*/value: \"$name\"/}" profile.yaml > named.yaml
grep -qF "$name" named.yaml || fail "the fixture's device name was not set"
cat > manifest.yaml <<YAML
version: 1
models:
  - name: dpctl
    command:
      argv: [$VENV/bin/python, $WARMUP]
      timeout: 2m
      kinds: [neo, sycl]
precisions: [fp32]
targets: [{name: arc-b580, profile: named.yaml}]
YAML
"$PREWARM" keygen --out keys/test_only_profile > /dev/null
expect_exit 0 "$PREWARM" build manifest.yaml --key keys/test_only_profile.key --out bundle > /dev/null
for want in "require opencl.device == $name" "require intel.ip-version == 20.1.0"; do
  grep -qF "$want" bundle/manifest || { cat bundle/manifest | grep -v '^file\|^dir'; fail "missing: $want"; }
done
sycl_slice=$(awk '/^slice /{id=$2} /^require opencl.device/{print id}' bundle/manifest | head -1)
neo_slice=$(awk '/^slice /{id=$2} /^require intel.ip-version/{print id}' bundle/manifest | head -1)
mkdir slice && zstd -qdc "bundle/slices/$sycl_slice.tar.zst" | tar -x -C slice
cat > hash.cpp <<'CPP'
#include <functional>
#include <iostream>
#include <string>
int main(int, char** argv) { std::cout << std::hash<std::string>{}(argv[1]) << "\n"; } // SYCL's own hash
CPP
g++ -o hash hash.cpp
src=$(cd slice/sycl && find . -name '*.src' | head -1)
[ -n "$src" ] || fail "no SYCL item in the slice"
device_string=$(python3 -c "import struct,sys; b=open(sys.argv[1],'rb').read(); n=struct.unpack('<Q',b[:8])[0]; print(b[8:8+n].decode())" "slice/sycl/$src")
[ "$(cut -d/ -f2 <<< "$device_string")" = "$name" ] || fail "the SYCL item's device string: $device_string"
top=$(cut -d/ -f2 <<< "$src")   # ./<hash of the device string>/...
[ "$top" = "$(./hash "$device_string")" ] || fail "the item is under $top, not std::hash(\"$device_string\")"
echo "SYCL item under std::hash(\"$device_string\") = $top"

step "a host reporting another IP version: the NEO slice is skipped, naming it"
igc=$(stat -L -c '%s:%Y' "$LIB/libigc.so.2")
cat > host.json <<JSON
[{"description": "test B580 (not a GPU)", "vendor": "intel", "pci-id": "0xe20b", "pci-revision": "0x00",
  "intel.driver": "26.27.039122", "intel.igc": "$igc", "intel.ip-version": "20.1.4", "opencl.device": "$name"}]
JSON
PREWARM_HOST_DEVICES=$PWD/host.json expect_exit 0 "$PREWARM_RUNTIME" install bundle --trust keys/test_only_profile.pub \
  --root root
assert_stderr_contains "slice $neo_slice skipped: intel.ip-version: host 20.1.4, slice 20.1.0 (NEO would miss every entry)"
echo "$LAST_STDERR" | grep "skipped"
pass
