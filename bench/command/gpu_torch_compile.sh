#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: cold vs prewarmed start of torch.compile and of an
# OpenCL program on NVIDIA, side by side with PyTorch's Mega-Cache.
#
# Prepare on the build host:  bench/command/make_gpu_carry.sh BUILD_DIR
# Run on the GPU machine, from the repository root, carrying .carry/gpu:
#   bench/command/gpu_torch_compile.sh [all|torch|opencl]
# Env: RUNS (fresh processes per mode, default 2), PRECISIONS ("fp32 fp16"),
#      COMPILE_MODE (torch.compile mode: default, max-autotune-no-cudagraphs, ...),
#      OUT (results directory; default ./out/gpu_torch_compile), PYTHON (python3).
# Dry runs of this script's logic on a host without NVIDIA (what it was
# tested with before it went to the GPU machine): DRY_RUN=1 TARGET=cpu
# TORCH_SCRIPT=<stand-in> OCL_PROBE_ARGS="--platform Portable" OCL_KINDS=pocl.
#
# torch (manifests/examples/torch_compile_warmup.py, per precision):
#   cold       empty TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR, CUDA_CACHE_PATH
#   megacache  the same empty dirs + torch.compiler.load_cache_artifacts() of a
#              blob saved by one earlier run (save_cache_artifacts)
#   prewarm    `prewarm build` (command workload: inductor, triton, cuda) ->
#              `prewarm-runtime install` into a fresh root -> each run on its
#              own copy of the root through `prewarm-runtime exec`
#              (fallback "captured" when prewarm build cannot run it: the
#              command module's capture copied into place, variables set)
# opencl (bench/command/ocl_build_probe on the NVIDIA OpenCL platform):
#   cold       empty CUDA_CACHE_PATH
#   prewarm    build (kinds: cuda) -> install -> exec; asserts the installed
#              ComputeCache gets no new files (hits)
# Writes OUT/samples.jsonl (one JSON object per run), OUT/summary.md,
# OUT/env.txt and OUT/logs/. Every run's result is checked by the program
# itself (compiled vs eager, GPU vs host): a wrong answer fails the run.
# env $(fresh_cache_env DIR) splits words on purpose (see fresh_cache_env).
# shellcheck disable=SC2046
set -uo pipefail

phase=${1:-all}
RUNS=${RUNS:-2}
PRECISIONS=${PRECISIONS:-"fp32 fp16"}
PYTHON=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
carry="$repo/.carry/gpu"
OUT=${OUT:-$repo/out/gpu_torch_compile}
mkdir -p "$OUT/logs"
work=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-gpu-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
samples="$OUT/samples.jsonl"
: > "$samples"
SCRIPT=${TORCH_SCRIPT:-$repo/manifests/examples/torch_compile_warmup.py}
COMPILE_MODE=${COMPILE_MODE:-default}
MODE_ARGS=()
[ "$COMPILE_MODE" = default ] || MODE_ARGS=(--mode "$COMPILE_MODE")
read -r -a OCL_ARGS <<< "${OCL_PROBE_ARGS:-}"
OCL_KINDS=${OCL_KINDS:-cuda}
ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}

note() { echo "== $*" | tee -a "$OUT/summary.log" >&2; }
die() { echo "gpu_torch_compile: $*" | tee -a "$OUT/summary.log" >&2; exit 1; }

if [ -z "${DRY_RUN:-}" ]; then
  command -v nvidia-smi > /dev/null || die "no nvidia-smi: run this on the GPU machine"
fi
[ -x "$carry/bin/prewarm" ] || die "$carry/bin/prewarm missing: run bench/command/make_gpu_carry.sh on the build host and carry .carry/gpu"

# --- environment -------------------------------------------------------------
# Carried libraries only where this host lacks the soname: a carried copy must
# never shadow a library the host's python/torch already loads.
mkdir -p "$work/ldlib"
for lib in "$carry"/lib/*; do
  [ -e "$lib" ] || continue
  name=$(basename "$lib")
  ldconfig -p | grep -c "^[[:space:]]*$name " > /dev/null || ln -s "$lib" "$work/ldlib/$name"
done
if ! ldconfig -p | grep -c "libOpenCL.so.1 " > /dev/null; then
  ln -s "$carry/opencl/libOpenCL.so.1" "$work/ldlib/libOpenCL.so.1"
fi
# ocl-icd finds vendor ICDs in /etc/OpenCL/vendors; containers with the NVIDIA
# driver mounted sometimes lack the .icd file.
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null && ldconfig -p | grep -c libnvidia-opencl.so.1 > /dev/null; then
  mkdir -p "$work/vendors"
  echo "libnvidia-opencl.so.1" > "$work/vendors/nvidia.icd"
  export OCL_ICD_VENDORS="$work/vendors"
fi
PW_LD="$work/ldlib${ORIG_LD_LIBRARY_PATH:+:$ORIG_LD_LIBRARY_PATH}"
pw() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/prewarm" "$@"; }
pwr() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/prewarm-runtime" "$@"; }
capture() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/command_capture" "$@"; }
# The OpenCL probe gets the carried loader only if the host has none.
probe() { LD_LIBRARY_PATH="$PW_LD" "$carry/bin/ocl_build_probe" "${OCL_ARGS[@]}"; }

# One registry target for this GPU: listing both h100 and h200 (same SM) would
# run every warm-up twice on the same device.
pci=$(nvidia-smi --query-gpu=pci.device_id --format=csv,noheader 2>/dev/null | head -1 | tr 'A-F' 'a-f')
case "$pci" in
  0x2335*) target=h200 ;;
  *) target=h100 ;;
esac
target=${TARGET:-$target}
{
  echo "date: $(date -u +%FT%TZ)"
  echo "target: $target (pci.device_id $pci)"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,pci.device_id --format=csv
  cat /proc/driver/nvidia/version 2>/dev/null
  "$PYTHON" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  "$PYTHON" -c 'import triton; print("triton", triton.__version__)' 2>&1
  echo "carried libraries used: $(ls "$work/ldlib" | tr '\n' ' ')"
  echo "OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-}"
  pw targets 2>&1 | head -40
  echo "--- plan probe"
  nproc; free -g | head -2
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt" >&2

pw keygen --out "$work/test_only_gpu" > /dev/null 2>&1 || die "prewarm keygen failed (see: LD_LIBRARY_PATH=$PW_LD $carry/bin/prewarm --help)"

# record PHASE PRECISION MODE RUN JSONFILE WALL_S [EXTRA_JSON]
record() {
  "$PYTHON" - "$@" >> "$samples" <<'PY'
import json, sys
phase, precision, mode, run, path, wall = sys.argv[1:7]
extra = json.loads(sys.argv[7]) if len(sys.argv) > 7 else {}
line = open(path).read().strip().splitlines()[-1]
row = {"phase": phase, "precision": precision, "mode": mode, "run": int(run), "wall_s": float(wall)}
row.update(json.loads(line))
row.update(extra)
print(json.dumps(row))
PY
}
count_files() { find "$1" -type f 2>/dev/null | wc -l; }
now() { date +%s.%N; }
elapsed() { "$PYTHON" -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$1" "$(now)"; }
# DIR -> env assignments for empty cache dirs, used unquoted as `env $(...)`:
# the word splitting is the point (work paths come from mktemp, no spaces).
fresh_cache_env() {
  mkdir -p "$1/inductor" "$1/triton" "$1/cuda"
  echo "TORCHINDUCTOR_CACHE_DIR=$1/inductor TRITON_CACHE_DIR=$1/triton CUDA_CACHE_PATH=$1/cuda" \
       "CUDA_CACHE_MAXSIZE=4294967296 TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1"
}

# --- torch.compile -------------------------------------------------------------
run_torch() {
  local p i dir t log
  for p in $PRECISIONS; do
    for i in $(seq 1 "$RUNS"); do
      dir="$work/cold-$p-$i"; log="$OUT/logs/torch-cold-$p-$i"
      t=$(now)
      if env $(fresh_cache_env "$dir") "$PYTHON" "$SCRIPT" "${MODE_ARGS[@]}" --precision "$p" > "$log.json" 2> "$log.err"; then
        record torch "$p" cold "$i" "$log.json" "$(elapsed "$t")" \
          "{\"cache_files_written\": $(count_files "$dir")}"
      else note "torch cold $p run $i failed: $(tail -3 "$log.err")"; fi
    done

    dir="$work/mega-save-$p"; log="$OUT/logs/torch-megasave-$p"
    t=$(now)
    if env $(fresh_cache_env "$dir") "$PYTHON" "$SCRIPT" "${MODE_ARGS[@]}" --precision "$p" --mega-cache-save "$work/mega-$p.bin" \
         > "$log.json" 2> "$log.err"; then
      record torch "$p" cold_megasave 1 "$log.json" "$(elapsed "$t")" \
        "{\"mega_cache_bytes\": $(stat -c %s "$work/mega-$p.bin")}"
      for i in $(seq 1 "$RUNS"); do
        dir="$work/mega-$p-$i"; log="$OUT/logs/torch-megacache-$p-$i"
        t=$(now)
        if env $(fresh_cache_env "$dir") "$PYTHON" "$SCRIPT" "${MODE_ARGS[@]}" --precision "$p" --mega-cache-load "$work/mega-$p.bin" \
             > "$log.json" 2> "$log.err"; then
          record torch "$p" megacache "$i" "$log.json" "$(elapsed "$t")"
        else note "torch megacache $p run $i failed: $(tail -3 "$log.err")"; fi
      done
    else note "torch mega-cache save $p failed: $(tail -3 "$log.err")"; fi
  done

  # prewarm: one build for all precisions, one install, a root copy per run.
  local plist manifest="$work/torch.yaml" mode=prewarm root="$work/torch-root"
  plist=$(echo $PRECISIONS | sed 's/ /, /g')
  cat > "$manifest" <<YAML
version: 1
models:
  - name: tiny-decoder
    command:
      argv: [$PYTHON, $SCRIPT${MODE_ARGS[*]:+, ${MODE_ARGS[0]}, ${MODE_ARGS[1]}}, --precision, "{precision}"]
      env: {LD_LIBRARY_PATH: "$ORIG_LD_LIBRARY_PATH"}
      timeout: 30m
      kinds: [inductor, triton, cuda]
precisions: [$plist]
targets: [$target]
bundle:
  channel: bench/torch
YAML
  t=$(now)
  if pw build "$manifest" --key "$work/test_only_gpu.key" --out "$work/torch.bundle" \
       > "$OUT/logs/torch-build.out" 2> "$OUT/logs/torch-build.err"; then
    local build_s; build_s=$(elapsed "$t")
    pw inspect "$work/torch.bundle" > "$OUT/logs/torch-bundle-inspect.txt" 2>&1
    t=$(now)
    pwr install "$work/torch.bundle" --trust "$work/test_only_gpu.pub" --root "$root" \
      > "$OUT/logs/torch-install.out" 2> "$OUT/logs/torch-install.err" || note "install failed: $(tail -3 "$OUT/logs/torch-install.err")"
    local install_s; install_s=$(elapsed "$t")
    pwr status --root "$root" > "$OUT/logs/torch-status.txt" 2>&1
    echo "{\"phase\": \"torch\", \"mode\": \"prewarm_setup\", \"build_s\": $build_s, \"install_s\": $install_s," \
         "\"bundle_bytes\": $(du -sb "$work/torch.bundle" | cut -f1)}" >> "$samples"
  else
    note "prewarm build (torch) failed; falling back to the command module's capture: $(tail -5 "$OUT/logs/torch-build.err")"
    mode=captured
  fi
  for p in $PRECISIONS; do
    if [ "$mode" = captured ]; then
      mkdir -p "$work/capture-$p"
      capture "$work/capture-$p" inductor,triton,cuda "$p" "LD_LIBRARY_PATH=$ORIG_LD_LIBRARY_PATH" -- \
        "$PYTHON" "$SCRIPT" "${MODE_ARGS[@]}" --precision '{precision}' > "$OUT/logs/torch-capture-$p.json" 2> "$OUT/logs/torch-capture-$p.err" \
        || { note "capture $p failed"; continue; }
    fi
    for i in $(seq 1 "$RUNS"); do
      log="$OUT/logs/torch-$mode-$p-$i"
      if [ "$mode" = prewarm ]; then
        [ -d "$root" ] || break
        cp -a "$root" "$work/root-$p-$i"
        local before; before=$(count_files "$work/root-$p-$i")
        t=$(now)
        if pwr exec --root "$work/root-$p-$i" -- env LD_LIBRARY_PATH="$ORIG_LD_LIBRARY_PATH" \
             "$PYTHON" "$SCRIPT" "${MODE_ARGS[@]}" --precision "$p" > "$log.json" 2> "$log.err"; then
          record torch "$p" prewarm "$i" "$log.json" "$(elapsed "$t")" \
            "{\"new_cache_files\": $(( $(count_files "$work/root-$p-$i") - before ))}"
        else note "torch prewarm $p run $i failed: $(tail -3 "$log.err")"; fi
      else
        dir="$work/captured-$p-$i"
        cp -a "$work/capture-$p/staging" "$dir"
        local before; before=$(count_files "$dir")
        t=$(now)
        if env $(fresh_cache_env "$dir") "$PYTHON" "$SCRIPT" "${MODE_ARGS[@]}" --precision "$p" > "$log.json" 2> "$log.err"; then
          record torch "$p" captured "$i" "$log.json" "$(elapsed "$t")" \
            "{\"new_cache_files\": $(( $(count_files "$dir") - before ))}"
        else note "torch captured $p run $i failed: $(tail -3 "$log.err")"; fi
      fi
    done
  done
}

# --- OpenCL on NVIDIA ------------------------------------------------------------
run_opencl() {
  local i dir t log mode=prewarm root="$work/ocl-root"
  if ! probe > "$OUT/logs/opencl-smoke.json" 2> "$OUT/logs/opencl-smoke.err"; then
    note "OpenCL on NVIDIA not usable here: $(cat "$OUT/logs/opencl-smoke.err")"
    return
  fi
  for i in $(seq 1 "$RUNS"); do
    dir="$work/ocl-cold-$i"; mkdir -p "$dir"; log="$OUT/logs/opencl-cold-$i"
    t=$(now)
    if CUDA_CACHE_PATH="$dir" CUDA_CACHE_DISABLE=0 probe > "$log.json" 2> "$log.err"; then
      record opencl - cold "$i" "$log.json" "$(elapsed "$t")" "{\"cache_files_written\": $(count_files "$dir")}"
    else note "opencl cold run $i failed: $(cat "$log.err")"; fi
  done
  cat > "$work/ocl.yaml" <<YAML
version: 1
models:
  - name: ocl-build-probe
    command:
      argv: [$carry/bin/ocl_build_probe${OCL_PROBE_ARGS:+, ${OCL_PROBE_ARGS// /, }}]
      env: {LD_LIBRARY_PATH: "$PW_LD"}
      timeout: 10m
      kinds: [$OCL_KINDS]
precisions: [fp32]
targets: [$target]
bundle:
  channel: bench/opencl
YAML
  if pw build "$work/ocl.yaml" --key "$work/test_only_gpu.key" --out "$work/ocl.bundle" \
       > "$OUT/logs/opencl-build.out" 2> "$OUT/logs/opencl-build.err" \
     && pwr install "$work/ocl.bundle" --trust "$work/test_only_gpu.pub" --root "$root" \
       > "$OUT/logs/opencl-install.out" 2> "$OUT/logs/opencl-install.err"; then
    pw inspect "$work/ocl.bundle" > "$OUT/logs/opencl-bundle-inspect.txt" 2>&1
    pwr status --root "$root" > "$OUT/logs/opencl-status.txt" 2>&1
  else
    note "prewarm build/install (opencl) failed; falling back to the capture: $(tail -5 "$OUT/logs/opencl-build.err" "$OUT/logs/opencl-install.err" 2>/dev/null)"
    mode=captured
    mkdir -p "$work/ocl-capture"
    capture "$work/ocl-capture" "$OCL_KINDS" fp32 -- "$carry/bin/ocl_build_probe" "${OCL_ARGS[@]}" \
      > "$OUT/logs/opencl-capture.json" 2> "$OUT/logs/opencl-capture.err" || { note "opencl capture failed"; return; }
  fi
  for i in $(seq 1 "$RUNS"); do
    log="$OUT/logs/opencl-$mode-$i"
    if [ "$mode" = prewarm ]; then
      cp -a "$root" "$work/ocl-root-$i"
      local before; before=$(count_files "$work/ocl-root-$i")
      t=$(now)
      if pwr exec --root "$work/ocl-root-$i" -- "$carry/bin/ocl_build_probe" "${OCL_ARGS[@]}" > "$log.json" 2> "$log.err"; then
        record opencl - prewarm "$i" "$log.json" "$(elapsed "$t")" \
          "{\"new_cache_files\": $(( $(count_files "$work/ocl-root-$i") - before )), \"installed_files\": $before}"
      else note "opencl prewarm run $i failed: $(cat "$log.err")"; fi
    else
      dir="$work/ocl-captured-$i"
      cp -a "$work/ocl-capture/staging/$OCL_KINDS" "$dir"
      local before; before=$(count_files "$dir")
      t=$(now)
      if CUDA_CACHE_PATH="$dir" CUDA_CACHE_DISABLE=0 probe > "$log.json" 2> "$log.err"; then
        record opencl - captured "$i" "$log.json" "$(elapsed "$t")" \
          "{\"new_cache_files\": $(( $(count_files "$dir") - before )), \"installed_files\": $before}"
      else note "opencl captured run $i failed: $(cat "$log.err")"; fi
    fi
  done
}

case "$phase" in
  all) run_torch; run_opencl ;;
  torch) run_torch ;;
  opencl) run_opencl ;;
  *) die "unknown phase '$phase' (all, torch, opencl)" ;;
esac

# --- summary -------------------------------------------------------------------
"$PYTHON" - "$samples" "$COMPILE_MODE" > "$OUT/summary.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out = ["# Cold vs prewarmed start on the GPU machine", "",
       f"torch.compile mode: {sys.argv[2]}", ""]
for s in (r for r in rows if r.get("mode") == "prewarm_setup"):
    out.append(f"prewarm setup ({s['phase']}): build {s['build_s']} s, install {s['install_s']} s, "
               f"bundle {s['bundle_bytes']} bytes")
# The stall a cache removes: torch, the first call of the compiled model
# (Mega-Cache's load_cache_artifacts() is a step the app must take before it,
# so it is added); OpenCL, the first result of the probe (its builds).
def stall(r):
    if r["phase"] == "torch":
        return r["first_call_s"] + r.get("mega_cache_load_s", 0.0)
    return r["first_result_s"]
groups = {}
for r in rows:
    if "first_result_s" in r:
        groups.setdefault((r["phase"], r.get("precision", "-"), r["mode"]), []).append(r)
out += ["", "| phase | precision | mode | n | median first call (s) | median both shapes' first calls (s) "
        "| median first result from process start (s) | median wall (s) | notes |",
        "|---|---|---|---|---|---|---|---|---|"]
med = lambda rs, f: statistics.median(f(r) for r in rs)
cold = {}
for (phase, prec, mode), rs in sorted(groups.items()):
    first = med(rs, stall)
    if mode == "cold":
        cold[(phase, prec)] = first
    both = f"{med(rs, lambda r: r['compile_calls_s'] + r.get('mega_cache_load_s', 0.0)):.3f}" \
        if all("compile_calls_s" in r for r in rs) else "-"
    notes = []
    for key in ("new_cache_files", "cache_files_written", "installed_files", "mega_cache_bytes", "build_s",
                "mega_cache_load_s", "first_call_s"):
        vals = [r[key] for r in rs if key in r]
        if vals:
            notes.append(f"{key} {vals}")
    out.append(f"| {phase} | {prec} | {mode} | {len(rs)} | {first:.3f} | {both} | "
               f"{med(rs, lambda r: r['first_result_s']):.3f} | {med(rs, lambda r: r['wall_s']):.3f} | {'; '.join(notes)} |")
out += ["", "First call (torch: + Mega-Cache load) vs cold, medians:", ""]
for (phase, prec, mode), rs in sorted(groups.items()):
    base = cold.get((phase, prec))
    if base and mode not in ("cold", "cold_megasave"):
        first = med(rs, stall)
        out.append(f"- {phase} {prec} {mode}: {base / first:.1f}x ({base:.2f} s -> {first:.2f} s)")
print("\n".join(out))
PY
cat "$OUT/summary.md" >&2
