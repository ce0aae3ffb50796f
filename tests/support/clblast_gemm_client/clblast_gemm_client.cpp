// SPDX-License-Identifier: Apache-2.0
// A small CLBlast client, as an application would write one: SGEMM of N x N
// on the first OpenCL device, checked against a CPU reference, with the time
// of the first call (which compiles CLBlast's programs) and of a second one.
//   clblast_gemm_client [N]      (default 256)
// Output: "first_ms <t>", "second_ms <t>", "max_error <e>", "ok".
#define CL_TARGET_OPENCL_VERSION 120 // clCreateCommandQueue, as CLBlast's own samples use
#include <CL/cl.h>
#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void
check(cl_int status, const char* what)
{
  if (status != CL_SUCCESS) {
    std::fprintf(stderr, "clblast_gemm_client: %s failed: %d\n", what, status);
    std::exit(1);
  }
}

double
ms_since(std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int
main(int argc, char** argv)
{
  const std::size_t n = argc > 1 ? static_cast<std::size_t>(std::atoi(argv[1])) : 256;
  cl_platform_id platform = nullptr;
  check(clGetPlatformIDs(1, &platform, nullptr), "clGetPlatformIDs");
  cl_device_id device = nullptr;
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int status = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  check(status, "clCreateContext");
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  check(status, "clCreateCommandQueue");

  std::vector<float> a(n * n), b(n * n), c(n * n, 0.0f);
  for (std::size_t i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 7) * 0.25f;
    b[i] = static_cast<float>(i % 5) * 0.5f;
  }
  const auto bytes = n * n * sizeof(float);
  cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a.data(), &status);
  check(status, "clCreateBuffer a");
  cl_mem db = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b.data(), &status);
  check(status, "clCreateBuffer b");
  cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, c.data(), &status);
  check(status, "clCreateBuffer c");

  const auto gemm = [&] {
    const auto start = std::chrono::steady_clock::now();
    const auto result = clblast::Gemm(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, n, n, n, 1.0f, da, 0,
                                      n, db, 0, n, 0.0f, dc, 0, n, &queue);
    if (result != clblast::StatusCode::kSuccess) {
      std::fprintf(stderr, "clblast_gemm_client: clblast::Gemm failed: %d\n", static_cast<int>(result));
      std::exit(1);
    }
    check(clFinish(queue), "clFinish");
    return ms_since(start);
  };
  const double first = gemm();
  const double second = gemm();
  check(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, bytes, c.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");

  double max_error = 0;
  for (std::size_t row = 0; row < n; row += 17) {
    for (std::size_t col = 0; col < n; col += 13) {
      double want = 0;
      for (std::size_t k = 0; k < n; ++k) {
        want += static_cast<double>(a[row * n + k]) * static_cast<double>(b[k * n + col]);
      }
      max_error = std::max(max_error, std::abs(want - static_cast<double>(c[row * n + col])) / std::max(1.0, std::abs(want)));
    }
  }
  std::printf("first_ms %.1f\nsecond_ms %.1f\nmax_error %.2e\n", first, second, max_error);
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (max_error > 1e-4) {
    std::fprintf(stderr, "clblast_gemm_client: result differs from the CPU reference (%.2e)\n", max_error);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
