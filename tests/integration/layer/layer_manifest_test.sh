#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The .lay layer manifest (runtime/layer/CMakeLists.txt) as the Khronos
# OpenCL ICD loader reads it (loader/linux/icd_linux.c: the whole file, a
# trailing newline dropped, is the library dlopen()ed): one line naming an
# existing library that exports clGetLayerInfo and clInitLayer. No loader
# that reads .lay files is packaged for Debian 12 (its ocl-icd 2.3.1 reads
# only OPENCL_LAYERS), so the loader itself does not run here.
# Needs: LAY (the build tree's .lay), LAYER (the library it must name).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
[ -f "$LAY" ] || fail "no layer manifest at $LAY"
[ "$(wc -l < "$LAY")" -eq 1 ] || fail "$LAY is not one line"
named=$(head -c -1 "$LAY")
[ "$(tail -c 1 "$LAY" | od -An -c | tr -d ' ')" = '\n' ] || fail "$LAY does not end with a newline"
[ "$named" = "$LAYER" ] || fail "$LAY names '$named', not '$LAYER'"
for symbol in clGetLayerInfo clInitLayer; do
  nm -D --defined-only "$named" | grep -q " T $symbol\$" || fail "$named does not export $symbol"
done
pass
