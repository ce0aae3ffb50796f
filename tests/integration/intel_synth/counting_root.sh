#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# counting_root.sh ROOT DEST LOG: DEST becomes an Intel root that is ROOT
# (every entry a link to ROOT's) except its host-bin/ocloc, which appends one
# line per run to LOG and then runs ROOT's ocloc:
#   <subcommand> <sha256 of the -file input, 16 hex; "-" when none> <arguments>
# Both the toolchain (aot/toolchains.hpp: <root>/host-bin/ocloc) and the card
# synthesis (virtual_device/neo_card_slice.cpp) run that ocloc, so LOG counts
# every ocloc run of a `prewarm build` with PREWARM_INTEL_ROOT=DEST, from
# outside prewarm. Used by tests/integration/intel_synth/ocloc_runs_test.sh
# and bench/intel/intel_targets_build.sh.
set -euo pipefail
root=$(readlink -f "$1") dest=$2 log=$(realpath -m "$3")
mkdir -p "$dest/host-bin"
for entry in "$root"/* "$root"/.[!.]*; do
  name=$(basename "$entry")
  case "$name" in
    host-bin) ;;
    .complete) cp "$entry" "$dest/$name" ;;
    *) ln -sfn "$entry" "$dest/$name" ;;
  esac
done
: >"$log"
cat >"$dest/host-bin/ocloc" <<WRAPPER
#!/bin/sh
input=-
previous=
for arg in "\$@"; do
  if [ "\$previous" = -file ] && [ -f "\$arg" ]; then
    input=\$(sha256sum <"\$arg" | cut -c1-16)
  fi
  previous=\$arg
done
printf '%s %s %s\n' "\${1:-}" "\$input" "\$*" >>'$log'
exec '$root/host-bin/ocloc' "\$@"
WRAPPER
chmod +x "$dest/host-bin/ocloc"
