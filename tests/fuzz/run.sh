#!/bin/sh
# Time-bounded libFuzzer run of every target in tests/fuzz (CI, label fuzz).
#   PREWARM_FUZZ_SECONDS  seconds per target (default 30)
#   PREWARM_FUZZ_BUILD_DIR  clang build directory (default <source>/build-fuzz)
# Configures a clang build with ASan + UBSan (+ libFuzzer), builds the fuzz
# targets, runs each over a copy of its seed corpus, and fails if one finds a
# crash; the crash input is copied to tests/fuzz/crashes/<target>/ so it
# becomes a regression input for the gcc build. Exit 77 (skipped): no clang.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
build_dir=${PREWARM_FUZZ_BUILD_DIR:-$source_dir/build-fuzz}
seconds=${PREWARM_FUZZ_SECONDS:-30}
jobs=${PREWARM_FUZZ_JOBS:-2}

# clang 15 first: libstdc++ 12's <expected> needs __cpp_concepts >= 202002,
# which clang 14/15 do not announce although clang 15 compiles it.
cc=""; cxx=""
for v in 15 14 ""; do
  if command -v "clang++${v:+-$v}" >/dev/null 2>&1; then
    cc="clang${v:+-$v}"; cxx="clang++${v:+-$v}"; break
  fi
done
if [ -z "$cxx" ]; then
  echo "run.sh: no clang: fuzzing skipped" >&2
  exit 77
fi
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="$sanitizers -D__cpp_concepts=202002L -Wno-macro-redefined" \
  -DCMAKE_C_FLAGS="$sanitizers" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DPREWARM_BUILD_FUZZERS=ON -DPREWARM_BUILD_BENCH=OFF \
  >"$build_dir.configure.log" 2>&1 || {
  cat "$build_dir.configure.log" >&2; exit 1; }
targets="fuzz_manifest fuzz_envelope fuzz_policy fuzz_slice_reader fuzz_tar_audit fuzz_oci_document fuzz_slice_selection"
ninja -C "$build_dir" -j"$jobs" $targets

status=0
for target in $targets; do
  name=${target#fuzz_}
  work=$(mktemp -d)
  cp -r "$here/corpus/$name/." "$work/"
  [ -d "$here/crashes/$name" ] && cp -r "$here/crashes/$name/." "$work/"
  echo "== $target: $seconds s" >&2
  if ! (cd "$work" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$build_dir/tests/fuzz/$target" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
        -artifact_prefix="$work/" "$work" 2>"$work/log"); then
    tail -40 "$work/log" >&2
    mkdir -p "$here/crashes/$name"
    for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
      [ -f "$f" ] && cp "$f" "$here/crashes/$name/" && echo "kept $(basename "$f") in tests/fuzz/crashes/$name" >&2
    done
    status=1
  else
    grep -E "^Done|#[0-9]+.*DONE" "$work/log" | tail -1 >&2 || true
  fi
  rm -rf "$work"
done
exit $status
