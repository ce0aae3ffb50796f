// SPDX-License-Identifier: Apache-2.0
// Reuse measured on a real PoCL cache: a child process builds and runs an
// OpenCL program (PoCL reads POCL_CACHE_DIR once per process, so each run is
// a fresh process), the parent watches the cache directory.
#include "audit/access_watch.hpp"
#include "audit/cache_usage.hpp"
#include "opencl/cl.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace prewarm::audit;

namespace {

struct Scratch
{
  fs::path dir = fs::temp_directory_path() / fs::path("prewarm-pocl-usage-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
};

// In the child: build `source`, run both kernels with local size 4, exit 0
// on success. Exit codes name the step that failed.
[[noreturn]] void
run_program(const fs::path& cache, const std::string& source)
{
  ::setenv("POCL_CACHE_DIR", cache.c_str(), 1);
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    ::_exit(77);
  }
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  cl_device_id device = nullptr;
  for (auto* platform : platforms) {
    char name[256] = {};
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::string(name).find("Portable Computing Language") != std::string::npos &&
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) {
      break;
    }
  }
  if (device == nullptr) {
    ::_exit(77);
  }
  cl_int err = 0;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  const char* text = source.c_str();
  cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &err);
  if (clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) {
    ::_exit(2);
  }
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(float), nullptr, &err);
  for (const char* name : {"add_one", "twice"}) {
    cl_kernel kernel = clCreateKernel(program, name, &err);
    if (err != CL_SUCCESS) {
      ::_exit(3);
    }
    clSetKernelArg(kernel, 0, sizeof buffer, &buffer);
    const size_t global = 64;
    const size_t local = 4;
    if (clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr) != CL_SUCCESS) {
      ::_exit(4);
    }
    clFinish(queue);
    clReleaseKernel(kernel);
  }
  clReleaseMemObject(buffer);
  clReleaseCommandQueue(queue);
  clReleaseProgram(program);
  clReleaseContext(context);
  ::_exit(0);
}

int
run_in_child(const fs::path& cache, const std::string& source)
{
  const pid_t child = ::fork();
  if (child == 0) {
    run_program(cache, source);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

const std::string k_source = "__kernel void add_one(__global float* x) { x[get_global_id(0)] += 1.0f; }\n"
                             "__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }\n";

// A watched run over `cache`: usage of kind "pocl".
KindUsage
watched_run(const fs::path& cache, const std::string& source)
{
  const auto before = list_files(cache);
  EXPECT_TRUE(before.has_value());
  auto watch = AccessWatch::start({{"pocl", cache}});
  EXPECT_TRUE(watch.has_value());
  const int rc = run_in_child(cache, source);
  const auto record = (*watch)->stop();
  if (rc == 77) {
    return {};
  }
  EXPECT_EQ(rc, 0) << "the OpenCL child failed";
  const auto after = list_files(cache);
  return measure_kind("pocl", cache, *before, *after, &record.kinds.at("pocl"));
}

} // namespace

TEST(PoclUsage, ColdRunIsAllNewWarmRunIsAllReusedChangedSourceIsNewWithSameKernels)
{
  Scratch s;
  const auto cache = s.dir / "kcache";
  fs::create_directories(cache);

  const auto cold = watched_run(cache, k_source);
  if (cold.kind.empty()) {
    GTEST_SKIP() << "no PoCL device";
  }
  EXPECT_GT(cold.new_files, 0u);
  EXPECT_EQ(cold.files_before, 0u);
  ASSERT_EQ(cold.new_entries.size(), 1u) << "one program";
  EXPECT_EQ(cold.new_entries[0].kernels, (std::set<std::string>{"add_one", "twice"}));

  const auto warm = watched_run(cache, k_source);
  EXPECT_EQ(warm.new_files, 0u) << warm.summary();
  ASSERT_TRUE(warm.reused_files.has_value());
  EXPECT_GT(*warm.reused_files, 0u);
  EXPECT_TRUE(warm.hit()) << warm.summary();
  ASSERT_EQ(warm.reused_entries.size(), 1u);
  EXPECT_NE(warm.reused_entries[0].label.find("add_one, twice"), std::string::npos) << warm.reused_entries[0].label;

  // What pyopencl's own cache does to every source it builds: a constant
  // with a fresh name (pyopencl/cache.py, "pyopencl_defeat_cache_<uuid>").
  const auto changed = watched_run(cache, k_source + "__constant int pyopencl_defeat_cache_1234 = 0;\n");
  EXPECT_FALSE(changed.hit());
  ASSERT_EQ(changed.new_entries.size(), 1u);
  EXPECT_EQ(changed.new_entries[0].kernels, cold.new_entries[0].kernels);
  EXPECT_NE(changed.new_entries[0].entry, cold.new_entries[0].entry);
}
