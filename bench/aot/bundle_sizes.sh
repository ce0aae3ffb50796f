#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bundle size per Intel target: `prewarm build` of the default manifest's
# models and precisions for N absent Intel targets (every job is ocloc AOT),
# then each slice's compressed (tar.zst, as shipped) and uncompressed bytes
# from `prewarm inspect --json`. Also the build's wall time (one run; the
# scaling figures are run_bench.sh's). Writes bundle-sizes.md into OUT_DIR.
#
#   bench/aot/bundle_sizes.sh PREWARM_BINARY [OUT_DIR]
# Environment: TARGETS (default "iris-xe dg1 arc-a770 arc-a380 max-1550"), JOBS (default 2).
set -euo pipefail
prewarm=${1:?usage: bundle_sizes.sh PREWARM_BINARY [OUT_DIR]}
out=${2:-$(dirname "$0")}
targets=${TARGETS:-"iris-xe dg1 arc-a770 arc-a380 max-1550"}
jobs=${JOBS:-2}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

default_manifest="$(dirname "$0")/../../manifests/default.yaml"
# The default manifest with its targets replaced by the Intel ones.
sed "s/^targets: .*/targets: [$(echo "$targets" | sed 's/ /, /g')]/" "$default_manifest" > "$scratch/manifest.yaml"
"$prewarm" keygen --out "$scratch/test_only_key" >/dev/null
start=$(date +%s%N)
"$prewarm" build "$scratch/manifest.yaml" --key "$scratch/test_only_key.key" --out "$scratch/bundle" --jobs "$jobs" \
  2> "$scratch/build.log"
milliseconds=$(( ($(date +%s%N) - start) / 1000000 ))
"$prewarm" inspect "$scratch/bundle" --json > "$scratch/inspect.json"

python3 - "$scratch/inspect.json" "$scratch/build.log" "$milliseconds" "$jobs" "$out/bundle-sizes.md" <<'PY'
import json, re, sys, datetime, platform
inspect = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
seconds, jobs, out = int(sys.argv[3]) / 1000, sys.argv[4], sys.argv[5]
programs = {}
for m in re.finditer(r"ok\s+(\S+?)/\S+ \(aot .*?\) [0-9.]+ s: (\d+) programs", log):
    programs[m.group(1)] = programs.get(m.group(1), 0) + int(m.group(2))
lines = [
    "# AOT bundle size per Intel target",
    "",
    f"`prewarm build` of manifests/default.yaml's models and precisions for absent Intel targets "
    f"(every job is ocloc AOT, `ocloc validate`d), --jobs {jobs}; {inspect['producer']}; "
    f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, {platform.node() or 'vm'}.",
    "",
    f"Whole build: {seconds:.1f} s wall for {len(inspect['slices'])} targets (one run, machine shared with other work).",
    "",
    "| slice | programs compiled (sum of the 3 precision jobs; jobs share some) | files (zebin + SPIR-V + meta per distinct program, + target record) | uncompressed bytes | shipped bytes (tar.zst) |",
    "|---|---|---|---|---|",
]
for s in inspect["slices"]:
    target = s["id"].rsplit("-", 1)[0]
    lines.append(f"| {s['id']} | {programs.get(target, '?')} | {s['kinds'][0]['files']} | {s['uncompressed_size']} | {s['payload_size']} |")
lines += ["", "Command: `bench/aot/bundle_sizes.sh build-lead/prewarm/cli/prewarm bench/aot`", ""]
open(out, "w").write("\n".join(lines))
print("\n".join(lines))
PY
