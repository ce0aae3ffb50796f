#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Container end-to-end test: build docker/Dockerfile with buildah on a
# debootstrap-made Debian image, start the entrypoint in the built image
# (buildah run) and check every start path:
#   warm       bundle installed, the application's first result is warm
#   tampered   flipped payload byte: warn => app starts with JIT and the
#              reason; fail => the container stops (non-zero exit)
#   pin        a validly signed manifest that is not the pinned one: E_PIN
#   no-match   a host that matches no slice: skipped, app starts (warn and fail)
#   secret     the signing key is in no layer of any built image (and the
#              check would see it: the public key IS found in the runtime layers)
#
# Usage: container_test.sh PREWARM_BINARY SOURCE_DIR [PREWARM_RUNTIME_BINARY]
# Exit: 0 pass, 1 fail, 77 skip (not root, no buildah/debootstrap, no mirror).
# Environment: PREWARM_CONTAINER_TOOLS=source (default: the image compiles
#   prewarm, TOOLS_FROM=source) or context (the image takes PREWARM_BINARY and
#   PREWARM_RUNTIME_BINARY, built on this Debian 12 host, from prebuilt-tools/
#   in the context: TOOLS_FROM=context, minutes instead of tens of minutes),
#   PREWARM_IMAGE_CACHE (base rootfs cache, see make-base-image.sh),
#   PREWARM_CONTAINER_KEEP=1 keeps the scratch dir and the tagged images,
#   PREWARM_CONTAINER_REPORT=FILE writes the measured figures there too,
#   PREWARM_CONTAINER_MIN_FREE_GB (default 20): below it, free space before
#   the prebuilt-bundle build by removing this run's images and cache layers.
set -uo pipefail

prewarm=${1:?usage: container_test.sh PREWARM_BINARY SOURCE_DIR}
source_dir=${2:?usage: container_test.sh PREWARM_BINARY SOURCE_DIR}
prewarm=$(realpath "$prewarm")
source_dir=$(realpath "$source_dir")
tools_from=${PREWARM_CONTAINER_TOOLS:-source}
runtime_binary=${3:-}

say() { echo "container-test: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

case "$tools_from" in
  source) ;;
  context) [ -x "$runtime_binary" ] || { say "FAIL: PREWARM_CONTAINER_TOOLS=context needs PREWARM_RUNTIME_BINARY"; exit 1; } ;;
  *) say "FAIL: PREWARM_CONTAINER_TOOLS=$tools_from: expected source or context"; exit 1 ;;
esac
[ "$(id -u)" = 0 ] || skip "buildah with chroot isolation and vfs storage needs root here (uid $(id -u))"
command -v buildah >/dev/null || skip "buildah is not installed"
command -v python3 >/dev/null || skip "python3 is needed to read the application's JSON report"

export BUILDAH_ISOLATION=chroot
buildah_args=${PREWARM_BUILDAH_ARGS:---storage-driver vfs}
export PREWARM_BUILDAH_ARGS="$buildah_args"
# shellcheck disable=SC2086  # several global options on purpose
bah() { buildah $buildah_args "$@"; }
# shellcheck source=buildah_storage.sh
. "$(dirname "$0")/buildah_storage.sh"
storage_begin

t0=$(date +%s)
base_image=$("$source_dir/docker/make-base-image.sh")
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { say "FAIL: making the base image failed (exit $rc)"; exit 1; }

scratch=$(mktemp -d /var/tmp/prewarm-container-test.XXXXXX)
tag=localhost/prewarm-test-$$
# Working containers, one per line (new_container runs in a subshell).
containers=$scratch/containers
touch "$containers"
cleanup() {
  while read -r c; do bah rm "$c" >/dev/null 2>&1; done <"$containers"
  if [ "${PREWARM_CONTAINER_KEEP:-0}" != 1 ]; then
    # This run's images go, and with them (storage_end) their cache layers:
    # vfs copies the whole root file system per layer, and a cache keyed by a
    # per-run tag would only grow. A later run rebuilds from the base image.
    for t in builder runtime demo prebuilt-runtime; do bah rmi "$tag-$t" >/dev/null 2>&1; done
    rm -rf "$scratch"
    storage_end
  else
    say "kept $scratch and images $tag-{builder,runtime,demo}"
  fi
}
trap cleanup EXIT

failures=0
report=()
pass() { say "PASS: $*"; report+=("PASS  $*"); }
failed() { say "FAIL: $*"; report+=("FAIL  $*"); failures=$((failures + 1)); }
figure() { say "figure: $*"; report+=("      $*"); }

# --- build context: the sources the Dockerfile copies, plus a test key ----------------------
ctx=$scratch/context
mkdir -p "$ctx/docker" "$ctx/keys"
for p in CMakeLists.txt cmake runtime kernels manifests prewarm; do
  cp -a "$source_dir/$p" "$ctx/"
done
cp -a "$source_dir/docker/entrypoint" "$ctx/docker/"
if [ "$tools_from" = context ]; then
  mkdir -p "$ctx/prebuilt-tools"
  cp "$prewarm" "$ctx/prebuilt-tools/prewarm"
  cp "$(realpath "$runtime_binary")" "$ctx/prebuilt-tools/prewarm-runtime"
  cp "$(dirname "$(realpath "$runtime_binary")")/prewarm-runtime-full" "$ctx/prebuilt-tools/prewarm-runtime-full"
  strip "$ctx/prebuilt-tools/prewarm" "$ctx/prebuilt-tools/prewarm-runtime" "$ctx/prebuilt-tools/prewarm-runtime-full"
fi
# The test key is kept with the base image cache: a new key every run would
# change the context and so rebuild every layer after `COPY . /src`.
key_dir=${PREWARM_IMAGE_CACHE:-/var/cache/prewarm-images}
mkdir -p "$key_dir"
if [ ! -s "$key_dir/test_only_container.key" ] || [ ! -s "$key_dir/test_only_container.pub" ]; then
  rm -f "$key_dir/test_only_container.key" "$key_dir/test_only_container.pub"
  "$prewarm" keygen --out "$key_dir/test_only_container" >/dev/null || { say "FAIL: keygen"; exit 1; }
fi
cp "$key_dir/test_only_container.pub" "$ctx/keys/test_only_container.pub"
key_file=$key_dir/test_only_container.key
public_key=$key_dir/test_only_container.pub

# SOURCE_DATE_EPOCH: today 00:00 UTC. Fixed for a day, so the layers stay
# cached between runs; recent, so the bundle (expires after 90 days) is valid.
epoch=$(( $(date +%s) / 86400 * 86400 ))
# The command line docs/guide/your-image.md shows: BUNDLE_FROM, TOOLS_FROM
# and BASE_IMAGE keep their defaults (buildah before 1.29 failed on a stage
# named from a defaulted ARG); only the prebuilt-tools run names TOOLS_FROM.
defaults_args=()
[ "$tools_from" = source ] || defaults_args+=(--build-arg "TOOLS_FROM=$tools_from")
[ "$base_image" = localhost/prewarm-base:bookworm ] || defaults_args+=(--build-arg "BASE_IMAGE=$base_image")
build_image() { # TARGET
  local target=$1 start
  start=$(date +%s)
  if ! bah build --isolation chroot --layers --force-rm --pull=never \
      -f "$source_dir/docker/Dockerfile" "${defaults_args[@]}" \
      --build-arg "PREWARM_PUBLIC_KEY=keys/test_only_container.pub" \
      --build-arg "SOURCE_DATE_EPOCH=$epoch" \
      --secret "id=prewarm_signing_key,src=$key_file" \
      --target "$target" -t "$tag-$target" "$ctx" >"$scratch/build-$target.log" 2>&1; then
    tail -n 40 "$scratch/build-$target.log" >&2
    say "FAIL: buildah build --target $target (log above)"
    exit 1
  fi
  figure "buildah build --target $target: $(( $(date +%s) - start )) s"
}
build_image runtime
build_image demo
build_image builder
figure "base image + all builds (TOOLS_FROM=$tools_from): $(( $(date +%s) - t0 )) s"

# The image's bundle: the forged-manifest check and the prebuilt-bundle path below use it.
c=$(bah from -q --pull=never "$tag-builder") && echo "$c" >>"$containers"
mnt=$(bah mount "$c") && cp -a "$mnt/opt/prewarm/bundle" "$scratch/image-bundle"
pinned_build=$(sha256sum "$mnt/opt/prewarm/bundle/manifest" | cut -d' ' -f1)
bah umount "$c" >/dev/null
bah rm "$c" >/dev/null 2>&1

# The runtime image ships a man page per prewarm-runtime subcommand.
c=$(bah from -q --pull=never "$tag-runtime") && echo "$c" >>"$containers"
mnt=$(bah mount "$c")
pages=$(cd "$mnt/usr/local/share/man/man1" 2>/dev/null && ls prewarm-runtime*.1 | tr '\n' ' ')
if [ -s "$mnt/usr/local/share/man/man1/prewarm-runtime-install.1" ] && [ -s "$mnt/usr/local/share/man/man1/prewarm-runtime.1" ]; then
  pass "runtime image ships the man pages: $pages"
else
  failed "runtime image: no man pages for prewarm-runtime and its subcommands (found: ${pages:-none})"
fi
bah umount "$c" >/dev/null

for t in builder runtime demo; do
  figure "image size $t: $(bah images --noheading --format '{{.Size}}' "$tag-$t")"
done

# --- the signing key is in no layer ---------------------------------------------------------
# Search every layer and config blob of each image for the private key's
# base64 body. The same search must find the public key in the runtime image
# (it is shipped there), which shows the search itself works.
needle_private=$(sed -n 2p "$key_file")
needle_public=$(grep -v -- '-----' "$public_key" | tr -d '\n')
search_image() { # IMAGE NEEDLE -> 0 found
  local image=$1 needle=$2 dir blob
  dir=$scratch/oci-$(echo "$image" | tr -c 'a-z0-9\n' '_')
  if [ ! -d "$dir" ]; then
    bah push --quiet "$image" "oci:$dir" >/dev/null 2>&1 || { say "cannot export $image"; return 2; }
  fi
  for blob in "$dir"/blobs/sha256/*; do
    # grep -c reads to the end: with pipefail, grep -q would stop early and
    # zcat's SIGPIPE would turn a match into "not found".
    if zcat -f "$blob" | grep -a -c -F -- "$needle" >/dev/null; then
      say "found in $image blob $(basename "$blob")"
      return 0
    fi
    # Also file names: a key file under any name would show in tar listings.
    if { zcat -f "$blob" 2>/dev/null | tar -t 2>/dev/null || true; } | grep -c -e 'signing_key' -e '\.key$' >/dev/null; then
      say "a key-like file name in $image blob $(basename "$blob")"
      return 0
    fi
  done
  return 1
}
secret_ok=1
for t in builder runtime demo; do
  if search_image "$tag-$t" "$needle_private"; then secret_ok=0; fi
done
if [ $secret_ok = 1 ]; then pass "secret: the private key is in no layer or config of builder, runtime, demo"
else failed "secret: the private key was found in an image"; fi
if search_image "$tag-runtime" "$needle_public"; then pass "secret (control): the layer search finds the shipped public key"
else failed "secret (control): the layer search cannot even find the public key"; fi
c=$(bah from -q --pull=never "$tag-runtime") && echo "$c" >>"$containers"
if bah run "$c" -- test -e /usr/local/bin/prewarm; then
  failed "runtime image contains the builder binary /usr/local/bin/prewarm"
elif bah run "$c" -- test -x /usr/local/bin/prewarm-runtime; then
  pass "runtime image holds prewarm-runtime and no prewarm builder binary"
else
  failed "runtime image lacks /usr/local/bin/prewarm-runtime"
fi

# --- start paths ------------------------------------------------------------------------------
# The application: one inference of the default manifest's model with its
# shapes (the kernels the bundle holds). Paths that only have to show that
# the application started, and whether it was pointed at installed caches,
# use a light one.
app=(prewarm run qwen2.5-0.5b --precision fp32 --batch 1 --prefill 16 --decode 2 --json)
light_app=(sh -c 'echo APP_STARTED; env | grep -E "^(PREWARM_PROGRAM_STORE|POCL_CACHE_DIR)=" || echo NO_CACHE_ENV')
new_container() { local c; c=$(bah from -q --pull=never "$tag-demo") || exit 1; echo "$c" >>"$containers"; echo "$c"; }
# start NAME CONTAINER [ENV...] -- runs the entrypoint with the app; sets
# $out (stdout file), $err (stderr file), $rc, $wall_ms
start() {
  local name=$1 ctr=$2 envs=() start_ms
  shift 2
  for e in "$@"; do envs+=(--env "$e"); done
  out=$scratch/$name.out err=$scratch/$name.err
  start_ms=$(date +%s%3N)
  if [ "${light:-0}" = 1 ]; then
    bah run "${envs[@]}" "$ctr" -- /usr/local/bin/prewarm-entrypoint "${light_app[@]}" >"$out" 2>"$err"
  else
    bah run "${envs[@]}" "$ctr" -- /usr/local/bin/prewarm-entrypoint "${app[@]}" >"$out" 2>"$err"
  fi
  rc=$?
  wall_ms=$(( $(date +%s%3N) - start_ms ))
  say "$name: exit $rc in $wall_ms ms; stderr:"
  sed 's/^/    /' "$err" >&2
}
# The application's own report: how many kernels it loaded from a warm cache.
report_field() { # FILE FIELD
  python3 - "$1" "$2" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
start = text.find("{")
doc = json.loads(text[start:]) if start >= 0 else {}
def find(d, key):
    if isinstance(d, dict):
        if key in d:
            return d[key]
        for v in d.values():
            r = find(v, key)
            if r is not None:
                return r
    return None
v = find(doc, sys.argv[2])
print("" if v is None else v)
EOF
}
app_started() { [ -n "$(report_field "$1" first_result)" ]; }
app_summary() { # FILE
  echo "store hits=$(report_field "$1" hits) misses=$(report_field "$1" misses)" \
       "first_result_s=$(report_field "$1" first_result) compile_s=$(report_field "$1" compile)"
}
is_warm() { # FILE: every program came from the installed store, none compiled
  local hits misses
  hits=$(report_field "$1" hits); misses=$(report_field "$1" misses)
  [ -n "$hits" ] && [ "$hits" -gt 0 ] && [ "${misses:-1}" = 0 ]
}

# cold reference: same image, install disabled
c=$(new_container)
start cold "$c" PREWARM_DISABLE=1
cold_ms=$wall_ms
figure "cold start (install disabled): app $(app_summary "$out"); container command $cold_ms ms"

# warm: default settings
c=$(new_container)
start warm "$c"
if [ $rc = 0 ] && grep -q "install step took" "$err" && ! grep -q "not installed" "$err" && is_warm "$out"; then
  pass "warm: installed, app's first result warm ($(app_summary "$out"))"
else
  failed "warm: exit $rc, app $(app_summary "$out")"
fi
install_ms=$(sed -n 's/.*install step took \([0-9]*\) ms.*/\1/p' "$err" | tail -n 1)
figure "entrypoint install step (verify + install, default bundle): ${install_ms:-?} ms; container command $wall_ms ms"
# second start of the same container: the install is a no-op
light=1 start warm-again "$c"
again_ms=$(sed -n 's/.*install step took \([0-9]*\) ms.*/\1/p' "$err" | tail -n 1)
if [ $rc = 0 ] && grep -q APP_STARTED "$out" && grep -q "^PREWARM_PROGRAM_STORE=\|^POCL_CACHE_DIR=" "$out"; then
  pass "warm restart: install is a no-op (${again_ms:-?} ms), app pointed at the installed caches"
else failed "warm restart: exit $rc"; fi
# install only (no app): the time the entrypoint adds to a container start
c=$(new_container)
s=$(date +%s%3N); bah run "$c" -- /usr/local/bin/prewarm-entrypoint >"$scratch/install-only.out" 2>&1; rc=$?
figure "entrypoint alone (install + status, no app): $(( $(date +%s%3N) - s )) ms, exit $rc"
c=$(new_container)
s=$(date +%s%3N); bah run --env PREWARM_DISABLE=1 "$c" -- /bin/true; rc=$?
figure "container start doing nothing (buildah run /bin/true): $(( $(date +%s%3N) - s )) ms"

# tampered payload
tamper='for f in /opt/prewarm/bundle/slices/*.tar.zst; do printf "\377" | dd of="$f" bs=1 seek=200 conv=notrunc 2>/dev/null; done'
c=$(new_container)
bah run "$c" -- sh -c "$tamper"
start tampered-warn "$c"
if [ $rc = 0 ] && grep -q "not installed" "$err" && grep -q "E_PAYLOAD_DIGEST" "$err" &&
   app_started "$out" && ! is_warm "$out"; then
  pass "tampered, warn: app started with JIT, reason printed ($(grep -o 'E_[A-Z_]*' "$err" | sort -u | tr '\n' ' '))"
else
  failed "tampered, warn: exit $rc, app $(app_summary "$out")"
fi
light=1 start tampered-fail "$c" PREWARM_ON_FAILURE=fail
if [ $rc != 0 ] && [ ! -s "$out" ]; then pass "tampered, fail: container stopped with exit $rc, app not started"
else failed "tampered, fail: exit $rc (expected non-zero and no app output)"; fi

# A validly signed bundle that is not the pinned one: the image's bundle with
# its serial bumped, signed again with the same key (PAE + Ed25519 with
# openssl, as bundle/signature.hpp specifies). The signature verifies; the
# trust policy's pinned digest refuses it (E_PIN).
forged=$scratch/forged
cp -a "$scratch/image-bundle" "$forged"
serial=$(sed -n 's/^serial //p' "$forged/manifest")
sed -i "s/^serial $serial\$/serial $((serial + 1))/" "$forged/manifest"
payload_type=application/vnd.prewarm.manifest.v1
{ printf 'DSSEv1 %d %s %d ' ${#payload_type} "$payload_type" "$(stat -c %s "$forged/manifest")"
  cat "$forged/manifest"; } >"$scratch/pae"
openssl pkeyutl -sign -rawin -inkey "$key_file" -in "$scratch/pae" -out "$scratch/forged.sig" &&
  key_id=$(openssl pkey -in "$key_file" -pubout -outform DER | sha256sum | cut -d' ' -f1) &&
  printf 'prewarm-signature 1\nsig ed25519 %s %s\n' "$key_id" "$(base64 -w0 "$scratch/forged.sig")" \
    >"$forged/manifest.sig" || failed "forging a re-signed manifest with openssl"
c=$(new_container)
bah copy "$c" "$forged/manifest" "$forged/manifest.sig" /opt/prewarm/bundle/ >/dev/null
bah run "$c" -- prewarm-runtime verify /opt/prewarm/bundle --trust /opt/prewarm/trust/bundle.pub \
  >"$scratch/forged-verify.out" 2>&1
forged_sig_rc=$?
light=1 start pin-warn "$c"
if [ $forged_sig_rc = 0 ] && [ $rc = 0 ] && grep -q "E_PIN" "$err" && grep -q APP_STARTED "$out" &&
   grep -q NO_CACHE_ENV "$out"; then
  pass "pinned digest, warn: a validly signed other manifest is refused (E_PIN), app started without caches (JIT)"
else failed "pinned digest, warn: signature check exit $forged_sig_rc, exit $rc"; fi
light=1 start pin-fail "$c" PREWARM_ON_FAILURE=fail
if [ $rc = 3 ] && [ ! -s "$out" ]; then pass "pinned digest, fail: exit 3, app not started"
else failed "pinned digest, fail: exit $rc (expected 3)"; fi

# a host that matches no slice (test double: PREWARM_HOST_DEVICES)
c=$(new_container)
cat >"$scratch/host.json" <<'EOF'
[ {"description": "test_only H100 without this bundle's slice", "vendor": "nvidia",
   "nvidia.driver": "580.159.04", "nvidia.sm": "90", "pci-id": "0x2330"} ]
EOF
bah copy "$c" "$scratch/host.json" /tmp/host.json >/dev/null
for mode in warn fail; do
  light=1 start "nomatch-$mode" "$c" PREWARM_HOST_DEVICES=/tmp/host.json PREWARM_ON_FAILURE=$mode
  if [ $rc = 0 ] && grep -q APP_STARTED "$out" && grep -q NO_CACHE_ENV "$out" &&
     grep -q -i -e "nothing applies" -e "no slice" -e "matches no" "$err"; then
    pass "no matching slice, $mode: skipped with the reason, app started without caches"
  else
    failed "no matching slice, $mode: exit $rc, app $(app_summary "$out")"
  fi
done

# --- the CI path: a bundle made elsewhere ----------------------------------------------------
# A bundle made elsewhere (shards + merge) at prebuilt-bundle/ in the context,
# no --secret given to this build: the bundle the first build made. It runs
# last and after freeing what the checks above made: with vfs every layer and
# every working container is a full copy of the root filesystem, and this
# build adds a new copy for each step after `COPY . /src`.
free_space() { df -h --output=avail "$1" 2>/dev/null | tail -n 1 | tr -d ' '; }
storage_root=$(bah info --format '{{.store.GraphRoot}}' 2>/dev/null || echo /var/lib/containers/storage)
build_prebuilt() {
  cp -a "$scratch/image-bundle" "$ctx/prebuilt-bundle" &&
  bah build --isolation chroot --layers --force-rm --pull=never -f "$source_dir/docker/Dockerfile" \
    --build-arg "BASE_IMAGE=$base_image" --build-arg "TOOLS_FROM=$tools_from" --build-arg BUNDLE_FROM=context \
    --build-arg "PREWARM_PUBLIC_KEY=keys/test_only_container.pub" \
    --target runtime -t "$tag-prebuilt-runtime" "$ctx" >"$scratch/build-prebuilt.log" 2>&1
}
# PREWARM_CONTAINER_SKIP_PREBUILT=1 leaves this path out (with
# TOOLS_FROM=source it recompiles the tools: the context differs by
# prebuilt-bundle/).
if [ "${PREWARM_CONTAINER_SKIP_PREBUILT:-0}" = 1 ]; then
  say "prebuilt-bundle path skipped (PREWARM_CONTAINER_SKIP_PREBUILT=1)"
else
  while read -r c; do bah rm "$c" >/dev/null 2>&1; done <"$containers"
  : >"$containers"
  rm -rf "$scratch"/oci-*
  # Measured on a fresh machine: storage peaks near 18 GB during this build
  # (8 GB before it). Below 20 GB free (PREWARM_CONTAINER_MIN_FREE_GB), the
  # images checked above and their unnamed cache layers go first (a later run
  # rebuilds them).
  min_free_gb=${PREWARM_CONTAINER_MIN_FREE_GB:-20}
  if [ "$(df -k --output=avail "$storage_root" | tail -n 1)" -lt $((min_free_gb * 1024 * 1024)) ]; then
    say "less than $min_free_gb GB free in $storage_root ($(free_space "$storage_root")): removing this run's images and unnamed layers first"
    for t in builder runtime demo; do bah rmi "$tag-$t" >/dev/null 2>&1; done
    bah rmi --prune >/dev/null 2>&1
  fi
  figure "free space before the prebuilt-bundle build: $(free_space "$storage_root") in $storage_root, $(free_space "$scratch") in $scratch"
  built=0
  if build_prebuilt; then
    built=1
  elif grep -q -e "storing layer" -e "no space left" -e "closed pipe" -e "copying layers" "$scratch/build-prebuilt.log"; then
    # A storage failure while committing a layer (seen once in CI: "io:
    # read/write on closed pipe"), not a Dockerfile failure: drop the
    # unnamed cache layers and try once more, and say so.
    tail -n 5 "$scratch/build-prebuilt.log" >&2
    say "prebuilt-bundle build: storage error committing a layer ($(free_space "$storage_root") free); pruning unnamed layers and retrying once"
    bah rmi --prune >/dev/null 2>&1
    rm -rf "$ctx/prebuilt-bundle"
    if build_prebuilt; then
      built=1
      figure "prebuilt-bundle build needed a retry after a storage error"
    fi
  fi
  if [ $built = 1 ]; then
    c=$(bah from -q --pull=never "$tag-prebuilt-runtime") && echo "$c" >>"$containers"
    pinned_prebuilt=$(bah run "$c" -- sed -n 's/^ *expect_manifest_sha256: //p' /opt/prewarm/trust/policy.yaml)
    if [ "$pinned_prebuilt" = "$pinned_build" ]; then
      pass "prebuilt bundle (BUNDLE_FROM=context, no key in the build): verified and pinned ($pinned_build)"
    else
      failed "prebuilt bundle: pinned '$pinned_prebuilt', expected '$pinned_build'"
    fi
    bah rmi "$tag-prebuilt-runtime" >/dev/null 2>&1
  else
    tail -n 30 "$scratch/build-prebuilt.log" >&2
    failed "prebuilt bundle: buildah build --build-arg BUNDLE_FROM=context failed ($(free_space "$storage_root") free in $storage_root)"
  fi
fi

figure "total test time: $(( $(date +%s) - t0 )) s"
say "summary:"
printf '  %s\n' "${report[@]}" >&2
if [ -n "${PREWARM_CONTAINER_REPORT:-}" ]; then printf '%s\n' "${report[@]}" >"$PREWARM_CONTAINER_REPORT"; fi
[ $failures = 0 ] || exit 1
exit 0
