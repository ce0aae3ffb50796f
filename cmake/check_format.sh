#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks that the C++ lines changed since BASE (default: main) follow
# .clang-format; lines nobody touched are not judged (the tree is not
# reformatted wholesale, so history stays readable). Prints the diff
# clang-format would apply and exits 1 when there is one.
#   cmake/check_format.sh [BASE]
set -eu
base=${1:-main}
command -v clang-format-diff >/dev/null 2>&1 || { echo "check_format: clang-format-diff not found (apt install clang-format)" >&2; exit 2; }
cd "$(git rev-parse --show-toplevel)"
changes=$(git diff -U0 --no-color "$base" -- '*.cpp' '*.hpp' | clang-format-diff -p1)
if [ -n "$changes" ]; then
  printf '%s\n' "$changes"
  echo "check_format: the lines above differ from .clang-format (apply: git diff -U0 $base | clang-format-diff -p1 -i)" >&2
  exit 1
fi
