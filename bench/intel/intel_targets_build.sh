#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Intel build of several targets vs one plain warm-up (issue 40, item 6):
#   build   `prewarm build --jobs JOBS` of two built-in models of one
#           architecture (qwen2.5-0.5b twice: a base model and a fine-tune
#           compile the same programs) for arc-b580, arc-a770 and mtl-u-igpu,
#           absent here: per job the AOT binaries (ocloc compile + validate),
#           the NEO slice recorded on the virtual device with its hit proof,
#           and the card's NEO entries (one ocloc compile per program);
#   warmup  `prewarm run qwen2.5-0.5b --precision fp32` once on this host's
#           OpenCL CPU device (PoCL, cold cache): the warm-up a user runs.
# Every ocloc run is counted from outside prewarm: the build runs on a copy of
# the Intel root whose ocloc logs each run
# (tests/integration/intel_synth/counting_root.sh), which PREWARM_OCLOC names
# so that it serves every target (as on a builder without a Debian ocloc of
# its own); "distinct" counts runs by subcommand, input digest and arguments.
#
# usage: intel_targets_build.sh OUT RUNS JOBS LABEL=DIR [LABEL=DIR...]
#   each DIR holds a `prewarm` and its `prewarm-cl-replay` (e.g. before and
#   after a change); the modes alternate within each round.
# Writes OUT/samples.jsonl (one line per sample) and OUT/results.md.
set -euo pipefail
out=$1 runs=$2 jobs=$3
shift 3
repo=$(cd "$(dirname "$0")/../.." && pwd)
root=${PREWARM_INTEL_ROOT:-/var/cache/prewarm/intel-sid}
[ -f "$root/.complete" ] || { echo "no Intel root at $root (./setup.sh intel-root)" >&2; exit 77; }
mkdir -p "$out"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-intel-targets.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"$repo/tests/integration/intel_synth/counting_root.sh" "$root" "$scratch/root" "$scratch/ocloc.log"
cat >"$scratch/manifest.yaml" <<'EOF'
version: 1
models:
  - name: base
    preset: qwen2.5-0.5b
  - name: tuned
    preset: qwen2.5-0.5b
precisions: [fp32]
shapes:
  batch_sizes: [1]
  prefill_lengths: [16]
  decode_steps: 2
targets: [arc-b580, arc-a770, mtl-u-igpu]
bundle:
  channel: bench
  expires: 90d
EOF
first_dir=${1#*=}
"$first_dir/prewarm" keygen --out "$scratch/bench" >/dev/null 2>&1
samples=$out/samples.jsonl
: >"$samples"

warmup() {
  local dir=$1 round=$2
  local base=$scratch/warmup-$round
  mkdir -p "$base/pocl"
  local start end
  start=$(date +%s.%N)
  (cd "$base" && env -i PATH=/usr/bin:/bin HOME="$HOME" POCL_CACHE_DIR="$base/pocl" \
     "$dir/prewarm" run qwen2.5-0.5b --precision fp32 >/dev/null 2>"$base/stderr")
  end=$(date +%s.%N)
  python3 -c 'import json,sys; print(json.dumps({"mode": "warmup", "round": int(sys.argv[1]),
      "seconds": float(sys.argv[3]) - float(sys.argv[2]), "load": open("/proc/loadavg").read().split()[0]}))' \
    "$round" "$start" "$end" >>"$samples"
}

build() {
  local label=$1 dir=$2 round=$3
  local base=$scratch/build-$label-$round
  mkdir -p "$base"
  : >"$scratch/ocloc.log"
  local start end
  start=$(date +%s.%N)
  (cd "$base" && env -i PATH=/usr/bin:/bin HOME="$HOME" PREWARM_INTEL_ROOT="$scratch/root" \
     PREWARM_OCLOC="$scratch/root/host-bin/ocloc" PREWARM_CL_REPLAY="$dir/prewarm-cl-replay" \
     "$dir/prewarm" build "$scratch/manifest.yaml" --jobs "$jobs" --key "$scratch/bench.key" --out bundle \
     --serial "$round" --json report.json >/dev/null 2>stderr)
  end=$(date +%s.%N)
  cp "$scratch/ocloc.log" "$out/ocloc-$label-$round.log"
  python3 - "$label" "$round" "$start" "$end" "$base" "$scratch/ocloc.log" >>"$samples" <<'PY'
import collections, json, sys
label, round_, start, end, base, log = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
report = json.load(open(f"{base}/report.json"))
runs = [line.rstrip("\n") for line in open(log)]
by_kind = collections.Counter(line.split(" ", 1)[0] for line in runs)
distinct = collections.Counter(line.split(" ", 1)[0] for line in set(runs))
jobs = report["jobs"]
card = sum(j.get("report", {}).get("neo", {}).get("card", {}).get("seconds", 0) for j in jobs)
print(json.dumps({"mode": label, "round": round_, "seconds": end - start,
                  "load": open("/proc/loadavg").read().split()[0],
                  "jobs": len(jobs), "ok": sum(j["state"] == "ok" for j in jobs),
                  "job_seconds": {j["id"]: j.get("seconds") for j in jobs},
                  "card_synthesis_seconds": card,
                  "ocloc_runs": dict(by_kind), "ocloc_distinct": dict(distinct)}))
PY
}

for round in $(seq 1 "$runs"); do
  warmup "$first_dir" "$round"
  for pair in "$@"; do
    build "${pair%%=*}" "${pair#*=}" "$round"
  done
done
python3 "$repo/bench/intel/summarize_intel_targets.py" "$samples" "$jobs" >"$out/results.md"
cat "$out/results.md"
