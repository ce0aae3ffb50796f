# Every dependency comes in as an imported target. A missing one fails the
# configure step with the Debian package that provides it (see setup.sh).
function(prewarm_require found package hint)
  if(NOT ${found})
    message(FATAL_ERROR "prewarm: ${package} not found (install ${hint}, or run ./setup.sh)")
  endif()
endfunction()

find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

find_package(OpenSSL 3.0 QUIET COMPONENTS Crypto)
prewarm_require(OpenSSL_FOUND "OpenSSL 3 (libcrypto)" "libssl-dev")

find_package(LibArchive 3.6 QUIET)
prewarm_require(LibArchive_FOUND "libarchive" "libarchive-dev")

find_package(yaml-cpp QUIET)
prewarm_require(yaml-cpp_FOUND "yaml-cpp" "libyaml-cpp-dev")

find_package(fmt QUIET)
prewarm_require(fmt_FOUND "fmt" "libfmt-dev")

find_package(CLI11 QUIET)
prewarm_require(CLI11_FOUND "CLI11" "libcli11-dev")

find_package(nlohmann_json 3 QUIET)
prewarm_require(nlohmann_json_FOUND "nlohmann-json" "nlohmann-json3-dev")

if(PREWARM_WITH_OPENCL)
  find_package(OpenCL QUIET)
  prewarm_require(OpenCL_FOUND "OpenCL ICD loader + headers" "ocl-icd-opencl-dev opencl-headers")
endif()

if(PREWARM_WITH_LEVEL_ZERO)
  pkg_check_modules(LEVEL_ZERO QUIET IMPORTED_TARGET level-zero)
  prewarm_require(LEVEL_ZERO_FOUND "Level Zero loader" "libze-dev")
  add_library(LevelZero::LevelZero ALIAS PkgConfig::LEVEL_ZERO)
endif()

if(PREWARM_BUILD_TESTS)
  find_package(GTest QUIET)
  prewarm_require(GTest_FOUND "GoogleTest" "libgtest-dev libgmock-dev")
endif()
if(PREWARM_BUILD_BENCH)
  find_package(benchmark QUIET)
  prewarm_require(benchmark_FOUND "Google Benchmark" "libbenchmark-dev")
endif()
