#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Sharded builds on the real PoCL device:
#   - two monolithic builds with one SOURCE_DATE_EPOCH are byte-identical
#   - for N = 2 and N = 3: N shards (`prewarm build --shard I/N`, signed with a
#     CI shard key) merged (`prewarm merge`, signed with the release key) are
#     byte-identical to the monolithic build signed with the release key
#   - merge refuses: a partial given twice (E_MERGE_DUPLICATE), a tampered
#     payload (E_PAYLOAD_DIGEST), a partial signed by an untrusted key
#   - `prewarm plan --shards N --format json|github-matrix|gitlab`: the
#     shards' jobs are disjoint and cover the plan; the outputs parse
#
# Usage: shard_test.sh PREWARM PREWARM_RUNTIME MANIFEST
# Exit: 0 pass, 1 fail, 77 skip (no OpenCL CPU device).
set -uo pipefail

prewarm=$(realpath "${1:?usage: shard_test.sh PREWARM PREWARM_RUNTIME MANIFEST}")
runtime=$(realpath "${2:?}")
manifest=$(realpath "${3:?}")

say() { echo "shard-test: $*" >&2; }
failures=0
pass() { say "PASS: $*"; }
failed() { say "FAIL: $*"; failures=$((failures + 1)); }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-shard-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1

if ! "$prewarm" plan "$manifest" >plan.txt 2>plan.err; then
  cat plan.err >&2
  failed "prewarm plan $manifest"
  exit 1
fi
if ! grep -q -w run plan.txt; then
  say "SKIP: no job of the test manifest can run here (no OpenCL CPU device?):"
  cat plan.txt plan.err >&2
  exit 77
fi

"$prewarm" keygen --out test_only_shard >/dev/null &&
  "$prewarm" keygen --out test_only_release >/dev/null &&
  "$prewarm" keygen --out test_only_stranger >/dev/null || { failed "keygen"; exit 1; }

# One SOURCE_DATE_EPOCH for every build (as CI exports the commit time):
# today 00:00 UTC, recent enough that the bundles have not expired.
export SOURCE_DATE_EPOCH=$(( $(date +%s) / 86400 * 86400 ))

build() { # OUT KEY [ARGS...]
  local out=$1 key=$2 start
  shift 2
  start=$(date +%s%3N)
  if ! "$prewarm" build "$manifest" --key "$key" --out "$out" "$@" >"$out.log" 2>&1; then
    tail -n 30 "$out.log" >&2
    failed "prewarm build --out $out $*"
    return 1
  fi
  say "built $out $* in $(( $(date +%s%3N) - start )) ms"
}
same_tree() { # A B: byte-identical trees (names, types, contents)
  diff -r --no-dereference "$1" "$2" >/dev/null &&
    [ "$(cd "$1" && find . | sort)" = "$(cd "$2" && find . | sort)" ]
}

build mono-a test_only_release.key || exit 1
build mono-b test_only_release.key || exit 1
if same_tree mono-a mono-b; then pass "two monolithic builds are byte-identical"
else failed "two monolithic builds differ: $(diff -r mono-a mono-b | head -5)"; fi
jobs_total=$(grep -c '^job ' mono-a/manifest)
slices_total=$(grep -c '^slice ' mono-a/manifest)
say "monolithic bundle: $slices_total slice(s), $jobs_total job(s)"

for n in 2 3; do
  if [ "$n" -gt "$jobs_total" ]; then say "N=$n: only $jobs_total jobs, skipped"; continue; fi
  partials=()
  for i in $(seq 1 "$n"); do
    build "part-$i-of-$n" test_only_shard.key --shard "$i/$n" || continue 2
    partials+=("part-$i-of-$n")
  done
  if "$prewarm" merge "${partials[@]}" --trust test_only_shard.pub --key test_only_release.key \
       --out "merged-$n" >"merge-$n.out" 2>"merge-$n.err"; then
    if same_tree "merged-$n" mono-a; then
      pass "N=$n: $n shards merged == monolithic build, byte for byte ($(cut -c1-16 "merge-$n.out")...)"
    else
      failed "N=$n: merged bundle differs from the monolithic one:"
      diff -r "merged-$n" mono-a >&2
      diff "merged-$n/manifest" mono-a/manifest >&2
    fi
  else
    cat "merge-$n.err" >&2
    failed "N=$n: prewarm merge failed"
  fi
  if "$runtime" verify "merged-$n" --trust test_only_release.pub >/dev/null 2>&1; then
    pass "N=$n: prewarm-runtime verify accepts the merged bundle"
  else failed "N=$n: prewarm-runtime verify rejects the merged bundle"; fi
done

# --- merge refuses what does not belong together --------------------------------------------
expect_refusal() { # NAME CODE MERGE-ARGS...
  local name=$1 code=$2 rc
  shift 2
  "$prewarm" merge "$@" --key test_only_release.key --out "refused-$name" >/dev/null 2>"refused-$name.err"
  rc=$?
  if [ $rc = 3 ] && grep -q "$code" "refused-$name.err" && [ ! -e "refused-$name" ]; then
    pass "merge refuses $name: exit 3, $code, no bundle written"
  else
    failed "merge $name: exit $rc (expected 3 with $code); stderr: $(cat "refused-$name.err")"
  fi
}
expect_refusal duplicate E_MERGE_DUPLICATE part-1-of-2 part-1-of-2 part-2-of-2 --trust test_only_shard.pub

cp -a part-2-of-2 tampered
payload=$(find tampered/slices -name '*.tar.zst' | head -n 1)
printf '\377' | dd of="$payload" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_refusal tampered E_PAYLOAD_DIGEST part-1-of-2 tampered --trust test_only_shard.pub

# A partial signed by a key nobody trusts: merging one partial re-signs it,
# here with the stranger's key.
if "$prewarm" merge part-2-of-2 --trust test_only_shard.pub --key test_only_stranger.key --out stranger \
     >/dev/null 2>stranger.err; then
  expect_refusal untrusted E_SIG part-1-of-2 stranger --trust test_only_shard.pub
else
  failed "re-signing one partial with merge: $(cat stranger.err)"
fi
# (Partials of different builds, E_MERGE_MISMATCH, and one path with two
# contents, E_MERGE_CONFLICT: test_merge, on bundles from the real writer.)

# --- CI matrices --------------------------------------------------------------------------------
for n in 1 2; do
  if "$prewarm" plan "$manifest" --shards "$n" --format json >"matrix-$n.json" 2>"matrix-$n.err" &&
     "$prewarm" plan "$manifest" --shards "$n" --format github-matrix >"matrix-$n.github" 2>>"matrix-$n.err" &&
     "$prewarm" plan "$manifest" --shards "$n" --format gitlab >"matrix-$n.gitlab.yml" 2>>"matrix-$n.err"; then
    if python3 - "matrix-$n.json" "matrix-$n.github" "matrix-$n.gitlab.yml" "$n" "$jobs_total" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
n, total = int(sys.argv[4]), int(sys.argv[5])
jobs = [j for s in doc["include"] for j in s["jobs"]]
assert doc["shards"] == n and len(doc["include"]) == n, doc
assert [s["shard"] for s in doc["include"]] == [f"{i}/{n}" for i in range(1, n + 1)]
assert len(jobs) == len(set(jobs)) == doc["total_jobs"] == total, (jobs, total)
assert all(s["runner"] == "cpu" for s in doc["include"]), doc  # cpu-only manifest
lines = open(sys.argv[2]).read().splitlines()
assert len(lines) == 1, "github-matrix must be one line"
gh = json.loads(lines[0])
assert [e["shard"] for e in gh["include"]] == [s["shard"] for s in doc["include"]]
gitlab = open(sys.argv[3]).read()
shard_jobs = re.findall(r"^(prewarm-shard-[0-9]+-of-[0-9]+):$", gitlab, re.M)
assert shard_jobs == [f"prewarm-shard-{i}-of-{n}" for i in range(1, n + 1)], shard_jobs
needs = re.search(r"^prewarm-merge:\n(?:  .*\n)*?  needs: \[(.*)\]$", gitlab, re.M)
assert needs and needs.group(1).split(", ") == shard_jobs, gitlab
EOF
    then pass "plan --shards $n: json covers all $jobs_total jobs once; github-matrix and gitlab parse"
    else failed "plan --shards $n: matrix check failed"; fi
  else
    cat "matrix-$n.err" >&2
    failed "plan --shards $n --format ..."
  fi
done
"$prewarm" plan "$manifest" --shards $((jobs_total + 1)) --format json >/dev/null 2>too-many.err
rc=$?
if [ $rc = 2 ]; then pass "plan --shards $((jobs_total + 1)) (more than jobs): usage error"
else failed "plan --shards beyond the job count: exit $rc, expected 2"; fi

[ $failures = 0 ] || { say "$failures failure(s)"; exit 1; }
say "all passed"
