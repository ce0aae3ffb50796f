#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The OpenCL layer on PoCL, in fresh processes, median of ROUNDS:
#   cold         empty PoCL cache, no layer
#   driver-warm  PoCL cache filled by a previous run, no layer
#   served       empty PoCL cache, layer serving from a store recorded once
#   nothing      empty PoCL cache, layer in serve mode over an empty store
#                (the layer's overhead when nothing is stored, vs cold)
#
#   bench/layer/run_bench.sh BUILD_DIR [ROUNDS] > bench/layer/results.md
#
# Subjects: layer_test_app build (tests/support, two local sizes) and
# clpeak --kernel-latency (Debian, unmodified). Wall time from date +%s%N.
set -euo pipefail
build=${1:?BUILD_DIR}
rounds=${2:-5}
layer="$build/runtime/layer/libprewarm_opencl_layer.so"
app="$build/tests/integration/layer/layer_test_app/layer_test_app"
work=$(mktemp -d /tmp/prewarm-layer-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export POCL_CACHE_DIR="$work/pocl"

wall_ms() { local t0 t1; t0=$(date +%s%N); "$@" > /dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

run_mode() { # MODE SUBJECT...
  local mode=$1; shift
  case $mode in
    cold) rm -rf "$POCL_CACHE_DIR"; wall_ms "$@" ;;
    driver-warm) wall_ms "$@" ;; # the cache the previous (untimed) run filled
    served) rm -rf "$POCL_CACHE_DIR"
      OPENCL_LAYERS="$layer" PREWARM_LAYER=serve PREWARM_PROGRAM_STORE="$work/store-$name" wall_ms "$@" ;;
    nothing) rm -rf "$POCL_CACHE_DIR"
      OPENCL_LAYERS="$layer" PREWARM_LAYER=serve PREWARM_PROGRAM_STORE="$work/empty" wall_ms "$@" ;;
  esac
}

echo "| subject | cold ms | driver-cache-warm ms | served by the layer ms | layer, nothing stored ms | served / driver-warm | nothing / cold |"
echo "|---|---|---|---|---|---|---|"
for subject in "layer_test_app build" "clpeak --kernel-latency"; do
  name=${subject%% *}
  set -- $subject
  [ "$1" = layer_test_app ] && set -- "$app" "${@:2}"
  command -v "$1" > /dev/null || [ -x "$1" ] || continue
  rm -rf "$POCL_CACHE_DIR"
  OPENCL_LAYERS="$layer" PREWARM_LAYER=record PREWARM_PROGRAM_STORE="$work/store-$name" "$@" > /dev/null 2>&1
  declare -A samples=()
  for ((r = 0; r < rounds; r++)); do
    # Interleaved, so a busy spell on the machine hits every mode alike.
    for mode in cold nothing served; do samples[$mode]+="$(run_mode $mode "$@") "; done
    rm -rf "$POCL_CACHE_DIR"; "$@" > /dev/null 2>&1 # fill PoCL's cache
    samples[driver-warm]+="$(run_mode driver-warm "$@") "
  done
  declare -A med=()
  for mode in cold driver-warm served nothing; do med[$mode]=$(tr ' ' '\n' <<< "${samples[$mode]}" | grep . | median); done
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
  echo "| $subject | ${med[cold]} | ${med[driver-warm]} | ${med[served]} | ${med[nothing]} | $(ratio "${med[served]}" "${med[driver-warm]}") | $(ratio "${med[nothing]}" "${med[cold]}") |"
  echo "samples $name: cold=[${samples[cold]}] driver-warm=[${samples[driver-warm]}] served=[${samples[served]}] nothing=[${samples[nothing]}]" >&2
  unset samples med
done
