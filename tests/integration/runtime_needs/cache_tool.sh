#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A stand-in for a program with its own kernel cache under $XDG_CACHE_HOME
# (hashcat's layout: $XDG_CACHE_HOME/<tool>/kernels): "compiles" (writes) a
# kernel only when it is not cached, and says which it did. It also leaves
# something outside its own subdirectory, which a capture with `subdir` must
# not ship. TOOL_EXPECT comes from the bundle's runtime_env.
set -eu
dir="${XDG_CACHE_HOME:?}/tool/kernels"
mkdir -p "$dir" "$XDG_CACHE_HOME/unrelated"
echo scratch > "$XDG_CACHE_HOME/unrelated/junk"
if [ -f "$dir/k0.bin" ]; then
  echo "tool: reused k0.bin (TOOL_EXPECT=${TOOL_EXPECT:-unset})"
else
  echo "compiled kernel k0" > "$dir/k0.bin"
  echo "tool: compiled k0.bin (TOOL_EXPECT=${TOOL_EXPECT:-unset})"
fi
