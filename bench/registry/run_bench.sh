#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Time and bytes to install a 3-target bundle on a host that matches one
# target: from a local bundle directory vs from a registry on 127.0.0.1
# (Debian's docker-registry, TLS + basic auth), fresh cache root each round,
# side by side in one run.
#   run_bench.sh BUILD_DIR [OUT_DIR] [MIB_PER_SLICE] [ROUNDS]
# BUILD_DIR holds prewarm, prewarm-runtime and make_test_bundle. Writes
# results.csv and results.md into OUT_DIR (default: this directory).
set -euo pipefail
build=$(cd "$1" && pwd)
out=${2:-$(cd "$(dirname "$0")" && pwd)}
mib=${3:-64}
rounds=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
tests=$here/../../tests/integration
prewarm=$build/prewarm/cli/prewarm
runtime=$build/runtime/cli/prewarm-runtime
maker=$build/tests/integration/registry/make_test_bundle
fail() { echo "run_bench.sh: $*" >&2; exit 1; }
source "$tests/registry/registry_lib.sh"

work=$(mktemp -d /var/tmp/prewarm-bench-registry.XXXXXX)
trap 'stop_all_registries; rm -rf "$work"' EXIT
cd "$work"
"$prewarm" keygen --out key > /dev/null
python3 - "$mib" <<'PY'
import os, random, sys
mib = int(sys.argv[1])
rng = random.Random(7)
# Cache-like content: half random, half repeated, in 64 KiB - 1 MiB files.
for t in ("cpu", "nvidia", "amd"):
    d = f"tree-{t}/pocl"; os.makedirs(d)
    total, i = 0, 0
    while total < mib << 20:
        n = rng.randint(64 << 10, 1 << 20)
        head = rng.randbytes(n // 2)
        open(f"{d}/k{i}.bin", "wb").write(head + head[: n - len(head)])
        total += n; i += 1
PY
"$maker" key.key bundle 1 cpu:cpu:tree-cpu nv:nvidia:tree-nvidia amd:amd:tree-amd
echo '[{"description": "bench cpu host", "vendor": "cpu"}]' > host.json
export PREWARM_HOST_DEVICES=$work/host.json
make_tls_and_auth "$work" bench bench_secret
start_registry r "$work"
write_docker_config "$work/docker" bench bench_secret "127.0.0.1:$REG_PORT_r"
export DOCKER_CONFIG=$work/docker
ref=$("$prewarm" push bundle "127.0.0.1:$REG_PORT_r/bench/bundle:v1" --ca-file cert.pem 2>/dev/null)
bundle_bytes=$(du -cb bundle/manifest bundle/manifest.sig bundle/slices/* | tail -1 | cut -f1)
slice_bytes=$(stat -c %s bundle/slices/cpu.tar.zst)

now() { date +%s.%N; }
echo "source,round,seconds,bytes_transferred" > "$out/results.csv"
for round in $(seq 1 "$rounds"); do
  rm -rf dir-root reg-root; sync
  t=$(now); "$runtime" install bundle --trust key.pub --root dir-root > /dev/null 2>&1; t1=$(now)
  echo "directory,$round,$(echo "$t1 - $t" | bc),$(( slice_bytes + $(stat -c %s bundle/manifest) + $(stat -c %s bundle/manifest.sig) ))" >> "$out/results.csv"
  from=$(( $(wc -l < r.log) + 1 ))
  t=$(now); "$runtime" install "$ref" --trust key.pub --root reg-root --ca-file cert.pem > /dev/null 2>&1; t1=$(now)
  sent=$(tail -n "+$from" r.log | grep -F '"GET ' |
    awk '{ for (i = 1; i < NF; i++) if ($i ~ /HTTP\/[0-9.]+"$/) s += $(i + 2) } END { print s + 0 }')
  echo "registry,$round,$(echo "$t1 - $t" | bc),$sent" >> "$out/results.csv"
  cmp -s <(cd dir-root && find pocl -type f -exec sha256sum {} + | sort) <(cd reg-root && find pocl -type f -exec sha256sum {} + | sort) ||
    fail "the two installs differ"
done

python3 - "$out/results.csv" "$out/results.md" "$bundle_bytes" "$slice_bytes" "$mib" "$rounds" <<'PY'
import csv, statistics, sys, platform, datetime, os
rows = list(csv.DictReader(open(sys.argv[1])))
bundle, slice_, mib, rounds = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
def stats(src):
    s = [float(r["seconds"]) for r in rows if r["source"] == src]
    b = [int(r["bytes_transferred"]) for r in rows if r["source"] == src]
    return statistics.median(s), min(s), max(s), statistics.median(b)
d, r = stats("directory"), stats("registry")
with open(sys.argv[2], "w") as f:
    f.write(f"""# Install from a registry vs from a local directory

Command: `bench/registry/run_bench.sh build bench/registry {mib} {rounds}` on {datetime.date.today()},
{platform.node()} ({os.cpu_count()} cores, shared with other builds: absolute times are noisy,
the ratio was measured side by side, alternating, in one run).

A 3-target bundle ({mib} MiB of cache files per target; {bundle} bytes in all, the matching
slice {slice_} bytes compressed), installed on a host that matches one target, into a fresh
cache root each round. Registry: Debian's docker-registry 2.8 on 127.0.0.1 with TLS and basic auth
(credentials from a Docker config file). Bytes: for the registry, what its access log says it sent
(every GET); for the directory, the files the installer reads.

| source | median s | min s | max s | bytes transferred |
|---|---|---|---|---|
| directory | {d[0]:.3f} | {d[1]:.3f} | {d[2]:.3f} | {int(d[3])} |
| registry | {r[0]:.3f} | {r[1]:.3f} | {r[2]:.3f} | {int(r[3])} |

Registry / directory: {r[0] / d[0]:.2f}x the time; {r[3] / bundle:.1%} of the bundle's bytes
cross the network ({bundle - r[3]:.0f} bytes of other targets' slices never fetched).
Per-round figures: `results.csv`.
""")
print(open(sys.argv[2]).read())
PY
