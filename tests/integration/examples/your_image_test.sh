#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# docs/guide/your-image.md, done as a user would: prewarm's tools image, then
# the worked example docker/examples/your-image (a pip-installed OpenCL app
# FROM a Python base, its own command as the warm-up) built with the guide's
# command line, then started: the entrypoint installs the bundle and execs the
# app, and an audited second start reuses PoCL's cache and compiles nothing.
#
# Docker Hub is not reachable from every CI machine, so the Python base is
# made here: Debian 12 (docker/make-base-image.sh) with its python3 3.11 and
# pip, tagged docker.io/library/python:3.11-slim-bookworm in buildah's storage
# (the official image is Debian 12 plus CPython 3.11 too); buildah then uses
# it instead of pulling. The tools image takes this build's binaries
# (TOOLS_FROM=context, as container_image_prebuilt_tools does).
# Cost here (2 cores): ~6-10 min cold (base image, apt, pip download of
# pyopencl and numpy), ~1-2 min with the layers cached.
# Usage: your_image_test.sh PREWARM PREWARM_RUNTIME SOURCE_DIR
# Exit: 0 pass, 1 fail, 77 skip (not root, no buildah/debootstrap, no mirror).
set -uo pipefail
prewarm=$(realpath "${1:?}")
runtime=$(realpath "${2:?}")
source_dir=$(realpath "${3:?}")
say() { echo "your-image-test: $*" >&2; }
[ "$(id -u)" = 0 ] || { say "SKIP: buildah with chroot isolation needs root here"; exit 77; }
command -v buildah >/dev/null || { say "SKIP: buildah is not installed"; exit 77; }
export BUILDAH_ISOLATION=chroot
buildah_args=${PREWARM_BUILDAH_ARGS:---storage-driver vfs}
export PREWARM_BUILDAH_ARGS="$buildah_args"
# shellcheck disable=SC2086  # several global options on purpose
bah() { buildah $buildah_args "$@"; }
# shellcheck source=../container/buildah_storage.sh
. "$(dirname "$0")/../container/buildah_storage.sh"
storage_begin

base=$("$source_dir/docker/make-base-image.sh")
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { say "FAIL: making the base image failed (exit $rc)"; exit 1; }
python_image=docker.io/library/python:3.11-slim-bookworm
if ! bah inspect --type image "$python_image" >/dev/null 2>&1; then
  say "making $python_image from $base (Debian 12's python3 3.11 and pip)"
  c=$(bah from -q --pull=never "$base") || exit 1
  # CAs this host added locally (a TLS-inspecting proxy's) go into the base,
  # as an organisation's own base image carries them: pip in the example's
  # build reaches PyPI through that proxy then.
  for crt in /usr/local/share/ca-certificates/*.crt; do
    [ -f "$crt" ] && bah copy "$c" "$crt" /usr/local/share/ca-certificates/ >/dev/null
  done
  bah run "$c" -- sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3 python3-pip python3-venv ca-certificates && update-ca-certificates && ln -sf python3 /usr/bin/python && rm -rf /var/lib/apt/lists/* /usr/lib/python3*/EXTERNALLY-MANAGED' >&2 \
    || { bah rm "$c" >/dev/null; say "FAIL: making the Python base"; exit 1; }
  bah commit -q "$c" "$python_image" >/dev/null && bah rm "$c" >/dev/null || exit 1
fi

scratch=$(mktemp -d /var/tmp/prewarm-your-image.XXXXXX)
containers=()
cleanup() {
  for c in "${containers[@]}"; do bah rm "$c" >/dev/null 2>&1; done
  [ "${PREWARM_CONTAINER_KEEP:-0}" = 1 ] || rm -rf "$scratch"
  # The tagged images (prewarm-tools, warm-demo and the bases) and their cache
  # layers stay for the next run; older versions and leftover containers go.
  storage_end
}
trap cleanup EXIT
t0=$(date +%s)

# 1. prewarm's tools image: the guide's command, with this build's binaries.
ctx=$scratch/prewarm
mkdir -p "$ctx/docker" "$ctx/prebuilt-tools"
for p in CMakeLists.txt cmake runtime kernels manifests prewarm; do cp -a "$source_dir/$p" "$ctx/"; done
cp -a "$source_dir/docker/entrypoint" "$ctx/docker/"
cp "$prewarm" "$runtime" "$(dirname "$(realpath "$runtime")")/prewarm-runtime-full" "$ctx/prebuilt-tools/"
strip "$ctx/prebuilt-tools/"*
(cd "$ctx" && bah build --layers -f "$source_dir/docker/Dockerfile" --ignorefile "$source_dir/docker/Dockerfile.dockerignore" \
   --build-arg TOOLS_FROM=context --target tools -t prewarm-tools . >"$scratch/tools.log" 2>&1) \
  || { tail -n 30 "$scratch/tools.log" >&2; say "FAIL: the tools image"; exit 1; }
say "tools image: $(( $(date +%s) - t0 )) s"

# 2. the example image, with the guide's own command line.
app=$scratch/your-image
cp -a "$source_dir/docker/examples/your-image" "$app"
mkdir -p "$app/keys"
"$prewarm" keygen --out "$scratch/test_only_release" >/dev/null || exit 1
cp "$scratch/test_only_release.pub" "$app/keys/release.pub"
t1=$(date +%s)
(cd "$app" && bah build --layers --secret "id=prewarm_signing_key,src=$scratch/test_only_release.key" -t warm-demo . \
   >"$scratch/app.log" 2>&1) || { tail -n 40 "$scratch/app.log" >&2; say "FAIL: buildah build of the example"; exit 1; }
say "example image: $(( $(date +%s) - t1 )) s"
grep -E "hit proof|reused" "$scratch/app.log" | tail -n 3 >&2

# 3. start it: the entrypoint installs, then execs the application.
c=$(bah from -q --pull=never warm-demo) || exit 1
containers+=("$c")
if ! bah run "$c" -- prewarm-entrypoint warm-demo >"$scratch/start.out" 2>"$scratch/start.err"; then
  cat "$scratch/start.err" >&2; say "FAIL: the first start"; exit 1
fi
grep -q '"first_result_s"' "$scratch/start.out" || { cat "$scratch/start.out" "$scratch/start.err" >&2; say "FAIL: the app printed no result"; exit 1; }
if grep -qE "not installed|warning" "$scratch/start.err"; then
  cat "$scratch/start.err" >&2; say "FAIL: the entrypoint did not install the bundle"; exit 1
fi
# An audited run on the installed root: everything reused, nothing new.
bah run "$c" -- prewarm-runtime exec --root /var/cache/prewarm --audit /tmp/audit.json -- warm-demo \
  >"$scratch/audit.out" 2>"$scratch/audit.err"
audit=$(grep -o 'audit: .*' "$scratch/audit.err" | head -n 1)
if ! [[ $audit =~ pocl:\ [1-9][0-9]*\ reused,\ 0\ new ]]; then
  cat "$scratch/audit.err" >&2; say "FAIL: the installed PoCL cache was not hit: ${audit:-no audit line}"; exit 1
fi
say "PASS: built with the guide's command line; the entrypoint installed and exec'd warm-demo ($(cat "$scratch/start.out")); $audit; $(( $(date +%s) - t0 )) s"
