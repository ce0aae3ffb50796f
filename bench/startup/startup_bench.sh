#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Start-up cost of prewarm-runtime, two builds side by side (issue 32, item 4):
# a no-op `install` (the bundle already installed), `env` and `exec -- /bin/true`
# against /bin/true alone, with a custom cache bundle of 128 and of 10,000
# files, every sample a fresh process, the binaries interleaved round by
# round; and the shared libraries each run loads (LD_DEBUG=files).
# Self-contained (bash, coreutils): runs wherever both binaries and a
# builder run, a GPU machine included. bench/run's runtime_startup case
# measures the same inside the harness.
#
#   bench/startup/startup_bench.sh BEFORE_RUNTIME AFTER_RUNTIME PREWARM [ROUNDS] [FILES...]
#     BEFORE_RUNTIME, AFTER_RUNTIME: prewarm-runtime binaries (e.g. main's and this branch's)
#     PREWARM: the builder that makes the bundle (targets: [cpu]: PoCL's device)
#     ROUNDS: samples per mode (default 9); FILES: bundle sizes (default 128 10000)
#   PREWARM_STARTUP_TARGET: the manifest's target (default cpu, PoCL's device;
#     h100 or h200 on the GPU machine: bench/startup/gpu_startup.sh)
# Prints a Markdown table of medians (min-max) on stdout; progress on stderr.
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,17p' "$0" >&2
  exit 2
fi
before=$(realpath "$1")
after=$(realpath "$2")
prewarm=$(realpath "$3")
rounds=${4:-9}
shift $(( $# < 4 ? $# : 4 ))
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(128 10000); fi

work=$(mktemp -d /var/tmp/prewarm-startup-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
say() { echo "startup_bench: $*" >&2; }

"$prewarm" keygen --out "$work/test_only_startup" > /dev/null
key=$work/test_only_startup

# One sample: wall milliseconds and libraries loaded, as "MS LIBS".
sample() {
  local t0 t1 libs
  t0=$(date +%s%N)
  LD_DEBUG=files "$@" > "$work/out" 2> "$work/err" || { cat "$work/err" >&2; return 1; }
  t1=$(date +%s%N)
  libs=$(grep -cE '^[[:space:]]*[0-9]+:[[:space:]]+file=[^ ]+ +\[[0-9]+\]; +needed by' "$work/err" || true)
  echo "$(( (t1 - t0) / 1000 )) $libs"
}

# median (min-max) of the numbers on stdin, microseconds printed as ms
stats() {
  sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2;
                 printf "%.2f (%.2f-%.2f)", m/1000, v[1]/1000, v[NR]/1000}'
}

echo "| files | mode | n | wall ms: median (min-max) | libraries loaded |"
echo "|---|---|---|---|---|"
for files in "${sizes[@]}"; do
  say "bundle of $files files"
  tree=$work/tree-$files
  for ((i = 0; i < files; i++)); do
    d=$tree/d$(printf '%04d' $((i / 100)))
    [ -d "$d" ] || mkdir -p "$d"
    head -c 256 /dev/urandom > "$d/entry$i.bin"
  done
  cat > "$work/m-$files.yaml" <<YAML
version: 1
models:
  - name: startup
    command:
      argv: ['if [ -e "\$CLFFT_CACHE_PATH/d0000" ]; then cat "\$CLFFT_CACHE_PATH"/d*/* > /dev/null; else cp -R $tree/. "\$CLFFT_CACHE_PATH"/; fi']
      shell: true
      kinds: []
      caches: [{name: startup, variable: CLFFT_CACHE_PATH}]
precisions: [fp32]
targets: [${PREWARM_STARTUP_TARGET:-cpu}]
bundle:
  channel: bench
  expires: 90d
YAML
  bundle=$work/bundle-$files
  "$prewarm" build "$work/m-$files.yaml" --key "$key.key" --out "$bundle" > /dev/null 2> "$work/build.err" \
    || { cat "$work/build.err" >&2; exit 1; }
  for which in before after; do
    runtime=${!which}
    "$runtime" install "$bundle" --trust "$key.pub" --root "$work/root-$which-$files" > /dev/null
  done
  modes=(direct exec-before exec-after env-before env-after install-before install-after)
  for mode in "${modes[@]}"; do : > "$work/$mode.ms"; : > "$work/$mode.libs"; done
  for ((r = 0; r < rounds; r++)); do
    # Rotated order each round: a load change hits every mode alike.
    for ((k = 0; k < ${#modes[@]}; k++)); do
      mode=${modes[$(( (k + r) % ${#modes[@]} ))]}
      which=${mode#*-}
      runtime=${!which:-}
      case $mode in
        direct) res=$(sample /bin/true) ;;
        exec-*) res=$(sample "$runtime" exec --root "$work/root-$which-$files" -- /bin/true) ;;
        env-*) res=$(sample "$runtime" env --root "$work/root-$which-$files")
               grep -q "^export PREWARM_ROOT=" "$work/out" || { say "$mode: no export lines"; exit 1; } ;;
        install-*) res=$(sample "$runtime" install "$bundle" --trust "$key.pub" --root "$work/root-$which-$files")
                   grep -q "already installed" "$work/out" || { say "$mode: not a no-op install"; exit 1; } ;;
      esac
      echo "${res% *}" >> "$work/$mode.ms"
      echo "${res#* }" >> "$work/$mode.libs"
    done
  done
  for mode in "${modes[@]}"; do
    echo "| $files | $mode | $rounds | $(stats < "$work/$mode.ms") | $(sort -n "$work/$mode.libs" | uniq | paste -sd/) |"
  done
done
echo
echo "before: $before; after: $after; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
