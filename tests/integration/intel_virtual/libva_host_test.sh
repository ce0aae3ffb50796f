#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the virtual device records never depends on the build host's libva:
# NEO lists cl_intel_va_api_media_sharing wherever dlopen("libva.so.2")
# succeeds, which on a build host with libva2 (python3-opencv, ffmpeg and
# GStreamer pull it in) used to change every OpenCL entry it recorded and
# broke the card synthesis (virtual_device/intel_root.hpp pins it now).
# The same manifest, a built-in engine preset (gptq-linear) and a command
# workload (prewarm-cl-replay building one program per OpenCL C language
# version, kinds [neo]), is built for a virtual B580 twice:
#   - with this host's libva2 as installed;
#   - with it hidden in a private mount namespace (/dev/null bound over the
#     library: dlopen fails as if libva2 were not installed).
# Both builds succeed and ship the same NEO entry names, every card entry
# included. Needs root (mount namespace) and libva2 installed (apt-get
# install libva2); skips otherwise, saying which. ~1-3 min on 2 cores.
set -euo pipefail
: "${PREWARM:?}" "${CL_REPLAY:?}"
source "$(dirname "$0")/../lib.sh"

require_intel_root
export PREWARM_INTEL_ROOT=$ROOT
unset PREWARM_OCLOC
[ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null || skip "needs root and unshare (a private mount namespace hides libva)"
libva=$(/sbin/ldconfig -p | awk '/libva\.so\.2 / && !found {print $NF; found = 1}')
[ -n "$libva" ] || skip "libva.so.2 is not installed here (apt-get install libva2): no host with libva to compare"
libva=$(readlink -f "$libva")
make_scratch intel-libva
[ -z "${KEEP_SCRATCH:-}" ] || trap - EXIT
cd "$SCRATCH"

mkdir app
echo '__kernel void add(__global float* a, float b) { a[get_global_id(0)] += b; }' > app/add.cl
for std in "" -cl-std=CL1.1 -cl-std=CL1.2 -cl-std=CL2.0 -cl-std=CL3.0; do
  printf 'add.cl\t%s\n' "$std" >> app/programs.list
done
cat > manifest.yaml <<YAML
version: 1
models:
  - name: gptq-linear
    preset: gptq-linear
  - name: cl-versions
    command:
      argv: [$CL_REPLAY, programs.list]
      cwd: $SCRATCH/app
      timeout: 5m
      kinds: [neo]
precisions: [fp32]
shapes:
  batch_sizes: [1]
  prefill_lengths: [16]
  decode_steps: 2
targets: [arc-b580]
bundle:
  channel: default
  expires: 90d
YAML
"$PREWARM" keygen --out keys/test_only_libva > /dev/null

# build NAME [hide]: the bundle in NAME/, then on stdout every NEO entry name it ships, sorted
build() {
  local -a run=("$PREWARM" build manifest.yaml --key keys/test_only_libva.key --out "$1" --json "$1.json")
  if [ "${2:-}" = hide ]; then
    # shellcheck disable=SC2016
    run=(unshare -m bash -c 'mount --bind /dev/null "$0" && exec "$@"' "$libva" "${run[@]}")
  fi
  expect_exit 0 "${run[@]}" > /dev/null
  mkdir "$1.slices"
  for slice in "$1"/slices/*.tar.zst; do
    zstd -qdc "$slice" | tar -x -C "$1.slices"
  done
  (cd "$1.slices" && find . -name '*.cl_cache' -o -name '*.l0_cache' | sort)
}

step "build with this host's libva ($libva)"
with=$(build with-libva)
step "build with libva hidden"
without=$(build without-libva hide)
python3 - with-libva.json without-libva.json <<'PY' || fail "the build reports"
import json, sys
for path in sys.argv[1:]:
    for job in json.load(open(path))["jobs"]:
        r = job["report"]
        card = r["neo"]["card"] if "neo" in r else r["card"]
        assert card and card["entries"] > 0, (path, job["id"], card)
        print(f'{path}: {job["id"]}: {card["entries"]} card entries, skipped {len(card["skipped"])}')
PY
[ -n "$with" ] || fail "no NEO entries shipped"
[ "$with" = "$without" ] || { diff <(echo "$with") <(echo "$without") || true; fail "the NEO entries depend on the build host's libva"; }
echo "figures: $(echo "$with" | grep -c cl_cache) OpenCL and $(echo "$with" | grep -c l0_cache) Level Zero entries, the same with and without the host's libva"
pass
