#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# man_pages.sh PROGRAM HELP2MAN OUTDIR [DESCRIPTION]: the man pages of one prewarm program,
# generated from its CLI definitions by help2man over its --help:
# OUTDIR/<program>.1, and OUTDIR/<program>-<subcommand>.1 for each subcommand
# `PROGRAM completion commands` lists (git and skopeo do the same). Used by
# the build (cmake/PrewarmShellDocs.cmake) and by docker/Dockerfile.
set -eu
program=$1
help2man=$2
out=$3
name=$(basename "$program")
mkdir -p "$out"
# Each page's NAME line: DESCRIPTION, else the first line of its --help.
"$help2man" --no-info --no-discard-stderr --name "${4:-$("$program" --help | sed -n '1s/^[^:]*: //p')}" \
  --output "$out/$name.1" "$program"
# A subcommand's page is named after it (prewarm-runtime-install(1)): help2man
# takes the name from the version line, so that line is given.
version=$("$program" --version | sed -n '1s/^[^ ]* //p')
for sub in $("$program" completion commands); do
  "$help2man" --no-info --no-discard-stderr --name "$("$program" "$sub" --help | sed -n 1p)" \
    --help-option "$sub --help" --version-string "$name-$sub $version" \
    --output "$out/$name-$sub.1" "$program"
done
