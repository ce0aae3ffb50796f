#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Make the Debian base image that docker/Dockerfile builds FROM, with no
# registry: debootstrap a minbase rootfs from Debian's archive, cache it as a
# tarball, and import it into buildah's storage as an image.
#
# Idempotent and cached at both steps:
#   1. $PREWARM_IMAGE_CACHE/debian-<suite>.tar   (skipped when present)
#   2. image $PREWARM_BASE_IMAGE in buildah storage (skipped when it exists and
#      its label names the sha256 of that same tarball)
# Exit status: 0 ok (prints the image name on stdout), 1 failed,
# 77 cannot run here (not root, tool missing, or the mirror is unreachable):
# ctest treats 77 as SKIP.
#
# Environment (defaults in brackets):
#   PREWARM_IMAGE_CACHE   [/var/cache/prewarm-images]
#   PREWARM_DEBIAN_SUITE  [bookworm]
#   PREWARM_DEBIAN_MIRROR [http://deb.debian.org/debian]
#   PREWARM_BASE_IMAGE    [localhost/prewarm-base:$suite]
#   PREWARM_BUILDAH_ARGS  [--storage-driver vfs]  (global buildah options, e.g. --root DIR)
set -eu

suite=${PREWARM_DEBIAN_SUITE:-bookworm}
mirror=${PREWARM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${PREWARM_IMAGE_CACHE:-/var/cache/prewarm-images}
image=${PREWARM_BASE_IMAGE:-localhost/prewarm-base:$suite}
buildah_args=${PREWARM_BUILDAH_ARGS:---storage-driver vfs}
tarball="$cache/debian-$suite.tar"

say() { echo "make-base-image: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "debootstrap and buildah (chroot isolation) need root; running as uid $(id -u)"
command -v debootstrap >/dev/null 2>&1 || skip "debootstrap is not installed (apt-get install debootstrap)"
command -v buildah >/dev/null 2>&1 || skip "buildah is not installed (apt-get install buildah)"

# buildah's word splitting of $buildah_args is intended (several options).
# shellcheck disable=SC2086
bah() { buildah $buildah_args "$@"; }

if [ ! -s "$tarball" ]; then
  # Probe the mirror first so that "no network" is a SKIP with a reason, not a
  # half-made rootfs and a failure.
  if command -v curl >/dev/null 2>&1; then
    curl -fsS -o /dev/null --max-time 20 "$mirror/dists/$suite/Release" ||
      skip "cannot reach the Debian mirror $mirror (debootstrap needs it)"
  fi
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.debootstrap.XXXXXX")
  trap 'rm -rf "$work"' EXIT INT TERM
  say "debootstrap --variant=minbase $suite from $mirror (a few minutes, once)"
  start=$(date +%s)
  if ! debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/log" 2>&1; then
    tail -n 20 "$work/log" >&2
    if grep -q -e "Failed getting release file" -e "Couldn't download" "$work/log"; then
      skip "debootstrap could not download from $mirror"
    fi
    say "debootstrap failed (log above)"
    exit 1
  fi
  # Nothing host-specific or stale in the image: package lists are fetched
  # by each stage's own `apt-get update`.
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin \
         "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/log/"*.log
  # A policy file so that postinst scripts never try to start daemons in a build.
  printf '#!/bin/sh\nexit 101\n' >"$work/rootfs/usr/sbin/policy-rc.d"
  chmod 0755 "$work/rootfs/usr/sbin/policy-rc.d"
  tar --numeric-owner --sort=name -C "$work/rootfs" -cf "$work/rootfs.tar" .
  mv "$work/rootfs.tar" "$tarball"
  rm -rf "$work"
  trap - EXIT INT TERM
  say "cached $tarball ($(du -h "$tarball" | cut -f1)) in $(( $(date +%s) - start ))s"
fi

digest=$(sha256sum "$tarball" | cut -d' ' -f1)
if existing=$(bah inspect --type image --format '{{index .ImageAnnotations "org.prewarm.rootfs.sha256"}}{{index .OCIv1.Config.Labels "org.prewarm.rootfs.sha256"}}' "$image" 2>/dev/null) &&
   [ "${existing#*"$digest"}" != "$existing" ]; then
  say "$image is up to date (rootfs sha256 $digest)"
  echo "$image"
  exit 0
fi

start=$(date +%s)
ctr=$(bah from scratch)
trap 'bah rm "$ctr" >/dev/null 2>&1 || true' EXIT INT TERM
# `buildah add` unpacks a local tar archive into the destination.
bah add "$ctr" "$tarball" / >/dev/null
bah config \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env LANG=C.UTF-8 \
  --cmd /bin/bash \
  --label "org.prewarm.rootfs.sha256=$digest" \
  --label "org.prewarm.rootfs.suite=$suite" \
  "$ctr"
bah commit --rm "$ctr" "$image" >/dev/null
trap - EXIT INT TERM
say "imported $image in $(( $(date +%s) - start ))s"
echo "$image"
