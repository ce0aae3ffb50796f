# ./setup.sh (the main job) configures without tests and benchmarks; the
# test command builds them. SETUP_DRY_RUN=1 prints the commands instead.
cp -r "$PREWARM_SOURCE_DIR/setup.sh" .
export SETUP_DRY_RUN=1 BUILD_DIR=b JOBS=2
echo "main job:"
bash setup.sh | grep -E '^\+ (cmake|ctest|main job)' | sed -E 's/ -DPREWARM_WERROR=(ON|OFF)//; s/ -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache//; s|: .*/prewarm keygen|: prewarm keygen|'
echo "test:"
bash setup.sh test | grep -E '^\+ (cmake|ctest)' | sed -E 's/ -DPREWARM_WERROR=(ON|OFF)//; s/ -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache//'
# And CMake honours it: the main job's build has prewarm, prewarm-runtime and
# the generated shell files, and no test or benchmark target.
cmake -S "$PREWARM_SOURCE_DIR" -B main-build -G Ninja -DPREWARM_BUILD_TESTS=OFF -DPREWARM_BUILD_BENCH=OFF \
  >configure.log 2>&1 || { cat configure.log; exit 1; }
ninja -C main-build -t targets all | sed 's/:.*//' >targets.txt
for t in prewarm prewarm-runtime prewarm_shell_docs prewarm-runtime_shell_docs; do grep -qx "$t" targets.txt && echo "has $t"; done
echo "test or benchmark targets: $(grep -ciE '(_test|_tests|bench_[a-z]+|_bench)$' targets.txt)"
