// SPDX-License-Identifier: Apache-2.0
// A small CLBlast application (CLBlast is not this project's code): runs the
// routines named on the command line on the first device of the platform
// whose name contains PLATFORM (default "Portable Computing Language"),
// checks each result on the host, and prints one JSON line:
//   {"routines": [...], "first_result_s": S, "total_s": S}
//   clblast_client [--platform NAME] gemm [axpy]
// CLBlast builds one OpenCL program per routine and precision; PoCL then
// compiles the work-group functions at the first enqueue, which is what a
// warm cache saves (docs/research/interception.md §4).
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int
die(const char* what, int code)
{
  std::fprintf(stderr, "clblast_client: %s failed (%d)\n", what, code);
  return 1;
}

} // namespace

int
main(int argc, char** argv)
{
  const auto start = Clock::now();
  std::string platform_name = "Portable Computing Language";
  std::vector<std::string> routines;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--platform") == 0 && i + 1 < argc) {
      platform_name = argv[++i];
    } else {
      routines.emplace_back(argv[i]);
    }
  }
  if (routines.empty()) {
    routines = {"gemm"};
  }
  cl_uint count = 0;
  clGetPlatformIDs(0, nullptr, &count);
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  cl_device_id device = nullptr;
  for (auto* p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::string(name).find(platform_name) != std::string::npos &&
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) {
      break;
    }
  }
  if (device == nullptr) {
    std::fprintf(stderr, "clblast_client: no device on a platform named like '%s'\n", platform_name.c_str());
    return 77;
  }
  cl_int err = 0;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  double first_result_s = -1;
  const auto mark_first = [&] {
    if (first_result_s < 0) {
      first_result_s = std::chrono::duration<double>(Clock::now() - start).count();
    }
  };
  constexpr size_t n = 64;
  for (const auto& routine : routines) {
    if (routine == "gemm") {
      std::vector<float> a(n * n), b(n * n), c(n * n, 0.0f);
      for (size_t i = 0; i < n * n; ++i) {
        a[i] = static_cast<float>(i % 7) * 0.5f;
        b[i] = static_cast<float>(i % 5) * 0.25f;
      }
      cl_mem da = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * 4, a.data(), &err);
      cl_mem db = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * 4, b.data(), &err);
      cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * 4, c.data(), &err);
      const auto status = clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                               clblast::Transpose::kNo, n, n, n, 1.0f, da, 0, n, db, 0, n, 0.0f, dc,
                                               0, n, &queue, nullptr);
      if (status != clblast::StatusCode::kSuccess) {
        return die("clblast::Gemm", static_cast<int>(status));
      }
      clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, n * n * 4, c.data(), 0, nullptr, nullptr);
      for (const size_t row : {size_t{0}, size_t{17}, n - 1}) {
        float want = 0;
        for (size_t k = 0; k < n; ++k) {
          want += a[row * n + k] * b[k * n + 3];
        }
        if (std::fabs(want - c[row * n + 3]) > 1e-3f * std::fabs(want) + 1e-3f) {
          std::fprintf(stderr, "clblast_client: gemm result wrong at row %zu: %f vs %f\n", row, c[row * n + 3], want);
          return 1;
        }
      }
      mark_first();
      clReleaseMemObject(da);
      clReleaseMemObject(db);
      clReleaseMemObject(dc);
    } else if (routine == "axpy") {
      std::vector<float> x(n * n, 2.0f), y(n * n, 1.0f);
      cl_mem dx = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * 4, x.data(), &err);
      cl_mem dy = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * n * 4, y.data(), &err);
      const auto status = clblast::Axpy<float>(n * n, 3.0f, dx, 0, 1, dy, 0, 1, &queue, nullptr);
      if (status != clblast::StatusCode::kSuccess) {
        return die("clblast::Axpy", static_cast<int>(status));
      }
      clEnqueueReadBuffer(queue, dy, CL_TRUE, 0, n * n * 4, y.data(), 0, nullptr, nullptr);
      if (std::fabs(y[5] - 7.0f) > 1e-5f) {
        std::fprintf(stderr, "clblast_client: axpy result wrong: %f\n", y[5]);
        return 1;
      }
      mark_first();
      clReleaseMemObject(dx);
      clReleaseMemObject(dy);
    } else {
      std::fprintf(stderr, "clblast_client: unknown routine '%s' (gemm, axpy)\n", routine.c_str());
      return 2;
    }
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  std::string names;
  for (const auto& r : routines) {
    names += (names.empty() ? "\"" : ", \"") + r + "\"";
  }
  std::printf("{\"routines\": [%s], \"first_result_s\": %.4f, \"total_s\": %.4f}\n", names.c_str(), first_result_s,
              std::chrono::duration<double>(Clock::now() - start).count());
  return 0;
}
