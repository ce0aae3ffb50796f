#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cost of the private writable copy that `prewarm-runtime env`/`exec` make for
# a user who cannot write a root-installed cache (runtime/install/user_access.hpp).
#   bench/install/user_copy_bench.sh PREWARM_RUNTIME BUNDLE TRUST.pub [ROUNDS]
# Installs BUNDLE as root into a scratch root, then as nobody (setpriv):
#   first `env`  = copy of every written kind + environment,
#   later `env`  = reuse of the copy (a stat per kind),
#   root `env`   = in place (no copy), and `cp -a` of the same trees for scale.
# Prints one markdown table row per measure (median of ROUNDS fresh copies).
set -euo pipefail
RUNTIME=$1 BUNDLE=$2 TRUST=$3 ROUNDS=${4:-5}
scratch=$(mktemp -d /tmp/prewarm-user-copy.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
root="$scratch/root"
"$RUNTIME" install "$BUNDLE" --trust "$TRUST" --root "$root" > /dev/null
# The caches live in the installed version (runtime/install/install_layout.hpp).
files=$(find "$root/.prewarm/versions" -type f ! -name '.*' | wc -l)
bytes=$(du -sb --exclude='.manifest' --exclude='.files' --exclude='.environment' "$root/.prewarm/versions" | cut -f1)
now() { date +%s.%N; }
elapsed() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f}")' "$1" "$2"; }
median() { printf '%s\n' "$@" | LC_ALL=C sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$scratch/tmp" "$@"; }
first=() later=() inplace=() cp_a=()
for _ in $(seq "$ROUNDS"); do
  rm -rf "$scratch/tmp"; mkdir "$scratch/tmp"; chown 65534:65534 "$scratch/tmp"
  t0=$(now); as_nobody "$RUNTIME" env --root "$root" > /dev/null 2>&1; t1=$(now); first+=("$(elapsed "$t0" "$t1")")
  t0=$(now); as_nobody "$RUNTIME" env --root "$root" > /dev/null 2>&1; t1=$(now); later+=("$(elapsed "$t0" "$t1")")
  t0=$(now); "$RUNTIME" env --root "$root" > /dev/null 2>&1; t1=$(now); inplace+=("$(elapsed "$t0" "$t1")")
  rm -rf "$scratch/cp"; mkdir "$scratch/cp"; sync
  t0=$(now); for d in "$root"/.prewarm/versions/*/*; do cp -a "$d" "$scratch/cp/"; done; t1=$(now); cp_a+=("$(elapsed "$t0" "$t1")")
done
echo "| installed | env as nobody, first (copy) | env as nobody, again | env as root (in place) | cp -a of the same trees |"
echo "|---|---|---|---|---|"
echo "| $files files, $bytes bytes | $(median "${first[@]}") s | $(median "${later[@]}") s | $(median "${inplace[@]}") s | $(median "${cp_a[@]}") s |"
