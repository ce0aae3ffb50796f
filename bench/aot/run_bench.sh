#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# AOT benchmark: wall time to compile the default manifest's kernel programs
# with ocloc for N Intel targets at --jobs 1 and --jobs 2 (fresh process and
# output directory per run; --jobs 1 and 2 alternate within each repetition so
# that drifting machine load hits both), the ratio of the medians, and the
# zebin/SPIR-V bytes per target. Writes results.csv, results.md and
# results.png (python3-matplotlib) into OUT_DIR.
#
#   bench/aot/run_bench.sh BENCH_BINARY [OUT_DIR]
# Environment: REPS (default 3), COUNTS (default "1 3 5"),
#   TARGETS (default "iris-xe dg1 arc-a770 arc-a380 max-1550": tgllp, dg1,
#   acm-g10, acm-g11, pvc); the first N of TARGETS are used for count N;
#   WAIT_LOAD (default 1.5) and WAIT_MAX (default 120): before each run, wait
#   up to WAIT_MAX seconds for the 1-minute load average to drop below
#   WAIT_LOAD (the machine is shared; the wait is recorded, not hidden).
# Besides load1 before each run, every row records the CPU time the REST of
# the machine used during the run (all CPUs' busy time from /proc/stat minus
# the run's own ocloc time): load1 lags by a minute and includes our own
# previous run, this does not.
set -euo pipefail
bench=${1:?usage: run_bench.sh BENCH_BINARY [OUT_DIR]}
out=${2:-$(dirname "$0")}
reps=${REPS:-3}
counts=${COUNTS:-"1 3 5"}
read -r -a targets <<<"${TARGETS:-iris-xe dg1 arc-a770 arc-a380 max-1550}"
python=${PYTHON:-/usr/bin/python3}   # Debian's, with python3-matplotlib
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

wait_load=${WAIT_LOAD:-1.5}
wait_max=${WAIT_MAX:-120}
ticks=$(getconf CLK_TCK)

# Busy CPU time of the whole machine so far, in clock ticks.
busy_ticks() {
  local _cpu user nice system idle iowait irq softirq steal _rest
  read -r _cpu user nice system idle iowait irq softirq steal _rest </proc/stat
  echo $((user + nice + system + irq + softirq + steal))
}

csv="$out/results.csv"
echo "targets,jobs,rep,seconds,ocloc_cpu_seconds,compiles,load1_before,others_cpu_seconds,waited_seconds" >"$csv"
sizes="$scratch/sizes.jsonl"
for n in $counts; do
  for rep in $(seq 1 "$reps"); do
    for jobs in 1 2; do
      rm -rf "$scratch/programs"
      waited=0
      while (( waited < wait_max )) && ! awk -v l="$wait_load" '{ exit !($1 < l) }' /proc/loadavg; do
        sleep 5
        waited=$((waited + 5))
      done
      load=$(cut -d' ' -f1 /proc/loadavg)
      busy_before=$(busy_ticks)
      json=$("$bench" --jobs "$jobs" --out "$scratch/programs" "${targets[@]:0:$n}")
      busy_after=$(busy_ticks)
      echo "$json" >>"$sizes"
      "$python" - "$json" "$n" "$jobs" "$rep" "$load" "$((busy_after - busy_before))" "$ticks" "$waited" >>"$csv" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
others = max(0.0, int(sys.argv[6]) / int(sys.argv[7]) - r['ocloc_cpu_seconds'])
print(f"{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},{r['seconds']:.3f},{r['ocloc_cpu_seconds']:.3f},{r['compiles']},"
      f"{sys.argv[5]},{others:.3f},{sys.argv[8]}")
PY
      echo "aot bench: $n targets, --jobs $jobs, rep $rep: $(tail -1 "$csv")" >&2
    done
  done
done

"$python" - "$csv" "$sizes" "$out" <<'PY'
import csv, json, os, statistics, sys, platform, subprocess
rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[3]
by = {}
for r in rows:
    by.setdefault((int(r["targets"]), int(r["jobs"])), []).append(r)
counts = sorted({k[0] for k in by})
sizes = {}
ocloc = ""
for line in open(sys.argv[2]):
    j = json.loads(line)
    ocloc = j["ocloc"]
    programs = j["programs_per_target"]
    for t in j.get("per_target", []):
        sizes[t["target"]] = (t["ocloc_device"], t["zebin_bytes"], t["spirv_bytes"])
lines = ["# AOT compile time: default manifest's kernel programs, N Intel targets", "",
         f"ocloc {ocloc}; {programs} programs per target (default manifest precisions); "
         f"{os.cpu_count()} CPUs; `{platform.node()}`; medians of {len(by[(counts[0],1)])} runs; "
         "load1 = 1-minute load average before each run (other builds share this machine); "
         "others = CPU time the rest of the machine used during a run, as a share of one core "
         "(/proc/stat busy time minus the run's ocloc time, median over the runs).", "",
         "| targets | compiles | --jobs 1 (s) | --jobs 2 (s) | speed-up | ocloc CPU s (j1 / j2) | load1 (min-max) "
         "| others, cores (j1 / j2) |",
         "|---|---|---|---|---|---|---|---|"]
ratios = []
for n in counts:
    j1 = [float(r["seconds"]) for r in by[(n, 1)]]
    j2 = [float(r["seconds"]) for r in by[(n, 2)]]
    c1 = statistics.median(float(r["ocloc_cpu_seconds"]) for r in by[(n, 1)])
    c2 = statistics.median(float(r["ocloc_cpu_seconds"]) for r in by[(n, 2)])
    loads = [float(r["load1_before"]) for r in by[(n, 1)] + by[(n, 2)]]
    def others(jobs):
        return statistics.median(float(r["others_cpu_seconds"]) / float(r["seconds"]) for r in by[(n, jobs)])
    m1, m2 = statistics.median(j1), statistics.median(j2)
    ratios.append(m1 / m2)
    lines.append(f"| {n} | {by[(n,1)][0]['compiles']} | {m1:.2f} | {m2:.2f} | {m1/m2:.2f}x | {c1:.2f} / {c2:.2f} | "
                 f"{min(loads):.1f}-{max(loads):.1f} | {others(1):.2f} / {others(2):.2f} |")
lines += ["", "Goal: >= 1.8x at --jobs 2 on 2 cores.", "",
          "| target | ocloc device | zebin bytes | SPIR-V bytes |", "|---|---|---|---|"]
for name, (dev, zb, sb) in sizes.items():
    lines.append(f"| {name} | {dev} | {zb} | {sb} |")
open(os.path.join(out, "results.md"), "w").write("\n".join(lines) + "\n")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for jobs, marker in ((1, "o"), (2, "s")):
        ax.plot(counts, [statistics.median(float(r["seconds"]) for r in by[(n, jobs)]) for n in counts],
                marker=marker, label=f"--jobs {jobs}")
    ax.set_xlabel("Intel targets")
    ax.set_ylabel("AOT wall time (s, median)")
    ax.set_title(f"ocloc {ocloc}, {programs} programs/target")
    ax.set_xticks(counts)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "results.png"), dpi=100)
except ImportError:
    print("matplotlib missing: no plot", file=sys.stderr)
print("\n".join(lines))
PY
