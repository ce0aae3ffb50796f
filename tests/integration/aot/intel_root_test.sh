#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Intel root's toolchain (compute runtime 26.27 in a Debian sid root,
# ./setup.sh intel-root) used for real, no Intel GPU on this host:
#   - its ocloc runs on host paths through the root's own loader (host-bin/ocloc);
#   - steppings: a bare PCI id makes ocloc build for A0 (0x56a5 -> dg2-g11-a0),
#     and every registry target with a pci_revision resolves, with
#     -revision_id, to the IP version the registry records;
#   - `prewarm targets` plans bmg, mtl-u, mtl-h, arl-h, lnl-m, ptl-h and ptl-u as
#     aot through the Intel root and says why; without the root they are skips;
#   - the seeds, built by `prewarm build` into signed slices, every zebin made
#     by ocloc 26.27, `ocloc validate`d and carrying the product config
#     (stepping) of its target: arc-b580 with the gptq-linear preset,
#     mtl-u-igpu and mtl-igpu with fp32/fp16/int8, arc-a380 at DG2-G11 B1.
# Cost on 2 shared cores: about 2 minutes (the mtl build ~70 s: 2 targets x 3
# precisions x ~7 programs at ~1 s a compile); prints each build's and job's time.
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
source "$(dirname "$0")/../lib.sh"

ROOT=${PREWARM_INTEL_ROOT:-/var/cache/prewarm/intel-sid}
[ -f "$ROOT/.complete" ] && [ -x "$ROOT/host-bin/ocloc" ] \
  || skip "no Intel root at $ROOT (./setup.sh intel-root makes it; ./setup.sh test does when absent)"
export PREWARM_INTEL_ROOT=$ROOT
OCLOC=$ROOT/host-bin/ocloc
make_scratch intel-root
cd "$SCRATCH"

step "the root's ocloc on host paths"
"$OCLOC" query OCL_DRIVER_VERSION > version.out 2>&1 || { cat version.out; fail "ocloc query"; }
version=$(tr -d '\0' < OCL_DRIVER_VERSION | tr -d ' \n')
[[ "$version" == 26.27.* ]] || fail "the root's ocloc is $version, expected 26.27.*"
echo "Intel root ocloc $version ($(sed -n 's/^intel-ocloc //p' "$ROOT/.complete"))"

# The product config (IP version) a zebin is for: note 6 of .note.intelgt.compat,
# NEO's HardwareIpVersion (architecture 10 bits, release 8, revision 6).
cat > zebin_ip.py <<'PY'
import struct, sys
def ip_of(path):
    d = open(path, "rb").read()
    assert d[:4] == b"\x7fELF", path
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]
    for s in secs:
        if d[names + s[0]:d.index(b"\0", names + s[0])] == b".note.intelgt.compat":
            p, end = s[4], s[4] + s[5]
            while p < end:
                namesz, descsz, kind = struct.unpack_from("<III", d, p)
                p += 12 + ((namesz + 3) & ~3)
                if kind == 6:
                    v, = struct.unpack_from("<I", d, p)
                    return f"{v >> 22}.{(v >> 14) & 0xff}.{v & 0x3f}"
                p += (descsz + 3) & ~3
    raise SystemExit(f"{path}: no product config note")
for path in sys.argv[1:]:
    print(ip_of(path))
PY

step "steppings: a bare PCI id is A0; the registry's id + revision is the stepping it records"
echo '__kernel void k(__global float* a) { a[get_global_id(0)] *= 2.0f; }' > k.cl
detect() { # PCI_ID [REVISION] -> the acronym ocloc picks
  local args=(compile -q -file k.cl -device "$1" -output probe -output_no_suffix)
  [ -n "${2:-}" ] && args+=(-revision_id "$(( $2 ))")
  "$OCLOC" "${args[@]}" 2>&1 | sed -n 's/.*device id: //p' | head -1
}
ids_of() { "$OCLOC" ids "$1" 2>&1 | tail -1; }
[ "$(detect 0x56a5)" = dg2-g11-a0 ] || fail "bare 0x56a5 no longer picks dg2-g11-a0 ($(detect 0x56a5))"
[ "$(python3 zebin_ip.py probe.bin)" = 12.56.0 ] || fail "a bare 0x56a5 zebin is not for 12.56.0"
"$PREWARM" targets --json > targets.json
python3 - > revisions.txt <<'PY'
import json
for t in json.load(open("targets.json"))["targets"]:
    if t["vendor"] == "intel" and t.get("pci_revision"):
        print(t["name"], t["pci_ids"][0], t["pci_revision"], t["ip_version"])
PY
[ -s revisions.txt ] || fail "no registry target names a PCI revision"
while read -r name id revision ip; do
  acronym=$(detect "$id" "$revision")
  got=$(ids_of "$acronym")
  echo "$name: -device $id -revision_id $revision -> $acronym ($got), registry $ip"
  [ "$got" = "$ip" ] || fail "$name: $id at revision $revision is $acronym = $got, the registry says $ip"
done < revisions.txt

step "prewarm targets: the Intel root serves what the host's ocloc does not know"
PREWARM_INTEL_ROOT=none "$PREWARM" targets > host_only.txt
"$PREWARM" targets > with_root.txt
cat with_root.txt
for pair in arc-b580:bmg mtl-igpu:mtl-h mtl-u-igpu:mtl-u arl-h-igpu:arl-h lnl-igpu:lnl-m ptl-h-igpu:ptl-h ptl-u-igpu:ptl-u; do
  target=${pair%%:*} device=${pair#*:}
  grep -Eq "^$target +intel +.* aot +ocloc $version \(Intel root $ROOT\) -device $device " with_root.txt \
    || fail "$target is not aot through the Intel root"
  if ocloc_host=$(command -v ocloc) && ! "$ocloc_host" ids "$device" > /dev/null 2>&1; then
    grep -Eq "^$target +intel +.* aot .*: ocloc [0-9.]+ \(host\) does not know '$device'" with_root.txt \
      || fail "$target: the reason does not say the host's ocloc does not know $device"
    grep -Eq "^$target +intel +.* skip +$target: ocloc [0-9.]+ \(host\) does not know '$device'" host_only.txt \
      || fail "$target is not a skip without the Intel root"
  fi
done
python3 - <<'PY' || fail "targets --json: toolchains"
import json
doc = json.load(open("targets.json"))
origins = [t["origin"] for t in doc["toolchains"]]
assert any(o.startswith("Intel root") for o in origins), origins
by = {t["name"]: t for t in doc["targets"]}
assert by["arc-b580"]["host"]["toolchain"]["origin"].startswith("Intel root"), by["arc-b580"]["host"]
assert by["arc-b580"]["ip_version"] == "20.1.0"
PY

"$PREWARM" keygen --out keys/test_only_intel > /dev/null
# build NAME TARGETS MODEL PRESET PRECISIONS [ENV...]: a signed bundle, its time printed.
build() {
  local name=$1 targets=$2 model=$3 preset=$4 precisions=$5
  shift 5
  preset_manifest "$model" "$preset" "$precisions" "$targets" > "$name.yaml"
  local start=$SECONDS
  env "$@" "$PREWARM" build "$name.yaml" --key keys/test_only_intel.key --out "$name" --jobs 2 \
    > "$name.out" 2> "$name.err" || { cat "$name.err"; fail "build $name"; }
  "$PREWARM_RUNTIME" verify "$name" --trust keys/test_only_intel.pub > /dev/null || fail "verify $name"
  echo "build $name: $((SECONDS - start)) s, $(du -sk "$name" | cut -f1) KiB"
}
# check_slices BUNDLE DEVICE IP COMPILER MIN_ZEBINS: every slice for DEVICE holds zebins ocloc
# validates, each for IP, and requires the driver COMPILER.
check_slices() {
  local bundle=$1 device=$2 ip=$3 compiler=$4 min=$5 dir count=0
  # Both spellings of the release: OpenCL's (zero-padded, as ocloc prints it) and Level Zero's.
  grep -q "^require .*intel.driver in $compiler,${compiler%.*}.$((10#${compiler##*.})),1.3.$((10#${compiler##*.}))$" "$bundle/manifest" \
    || { cat "$bundle/manifest"; fail "$bundle: no requirement intel.driver in $compiler, its unpadded and its Level Zero form"; }
  rm -rf "x-$bundle" && mkdir "x-$bundle"
  for slice in "$bundle"/slices/*.tar.zst; do
    zstd -qdc "$slice" | tar -x -C "x-$bundle"
  done
  dir=$(find "x-$bundle" -type d -path "*/programs/aot/$device" | head -1)
  [ -n "$dir" ] || fail "$bundle: no programs/aot/$device"
  for zebin in "$dir"/*.zebin; do
    "$OCLOC" validate -file "$zebin" -device "$device" > validate.log 2>&1 \
      || { cat validate.log; fail "$bundle: ocloc validate $zebin"; }
    grep -q "Binary is VALID" validate.log || { cat validate.log; fail "$bundle: $zebin not valid"; }
    [ "$(python3 zebin_ip.py "$zebin")" = "$ip" ] || fail "$bundle: $zebin is for $(python3 zebin_ip.py "$zebin"), not $ip"
    count=$((count + 1))
  done
  [ "$count" -ge "$min" ] || fail "$bundle: $count zebins for $device, expected at least $min"
  grep -q "^ip-version $ip$" "$dir"/target.* || fail "$bundle: the target record does not say IP $ip"
  echo "$bundle: $count zebins for $device (IP $ip), each validated by ocloc $version"
}

step "seed: arc-b580 with the gptq-linear preset (bmg, by the Intel root's ocloc)"
build b580 "[arc-b580]" gptq gptq-linear "[fp16]"
check_slices b580 bmg 20.1.0 "$version" 1
grep -q "Intel root" b580.err || { cat b580.err; fail "the build log does not say which toolchain"; }
# A B580 host played by the Level Zero test double (not a GPU) whose driver reports NEO
# 26.27 the Level Zero way (26.27.39122): the runtime's probe takes the slice.
if [ -n "${ZE_TEST_DRIVER:-}" ]; then
  ZE_ENABLE_ALT_DRIVERS=$ZE_TEST_DRIVER PREWARM_ZE_TEST_DEVICE_ID=0xe20b PREWARM_ZE_TEST_DRIVER_VERSION=26.27.39122 \
    "$PREWARM_RUNTIME" install b580 --trust keys/test_only_intel.pub --root b580-root > b580-install.out 2>&1 \
    || { cat b580-install.out; fail "install on the B580 test double"; }
  grep -q "slice arc-b580-" b580-install.out || { cat b580-install.out; fail "the arc-b580 slice was not installed"; }
  find b580-root -path '*/aot/bmg/target.arc-b580' | grep -q . || fail "no aot/bmg/target.arc-b580 installed"
  echo "installed on a B580 (Level Zero test double, driver 26.27.39122)"
  # The same host on another release is refused, with the reason.
  expect_exit 4 env ZE_ENABLE_ALT_DRIVERS=$ZE_TEST_DRIVER PREWARM_ZE_TEST_DEVICE_ID=0xe20b \
    PREWARM_ZE_TEST_DRIVER_VERSION=25.18.33578 "$PREWARM_RUNTIME" install b580 --trust keys/test_only_intel.pub \
    --root b580-other
fi

step "seed: mtl-u-igpu and mtl-igpu with fp32, fp16 and int8 (qwen2.5-0.5b)"
build mtl "[mtl-u-igpu, mtl-igpu]" qwen qwen2.5-0.5b "[fp32, fp16, int8]"
check_slices mtl mtl-u 12.70.4 "$version" 3
check_slices mtl mtl-h 12.71.4 "$version" 3
slices=$(ls mtl/slices/*.tar.zst | wc -l)
# One AOT slice per target, and beside each the NEO slice the virtual device
# makes wherever the Intel root is (which this test needs anyway).
[ "$slices" -eq 4 ] || fail "mtl: $slices slices, expected an AOT and a NEO slice per target"
for target in mtl-u-igpu mtl-igpu; do
  for precision in fp32 fp16 int8; do
    line=$(grep -E "\] ok +$target/qwen/$precision \(aot on .*Intel root" mtl.err) \
      || { cat mtl.err; fail "mtl: no job $target/qwen/$precision compiled by the Intel root's ocloc"; }
    echo "  ${line#*] }" | sed -E 's/ \(aot on .*\)\)\)//'
  done
done

step "seed: arc-a380 (PCI 0x56a5) at its B1 stepping, by ocloc 26.27"
build a380 "[arc-a380]" qwen qwen2.5-0.5b "[fp32]" "PREWARM_OCLOC=$OCLOC"
check_slices a380 acm-g11 12.56.5 "$version" 1
grep -q '^require .*pci-id in 0x56a5' a380/manifest || fail "a380: no pci-id requirement"
pass
