// SPDX-License-Identifier: Apache-2.0
// A small OpenCL program whose start-up is dominated by clBuildProgram: it
// builds a generated program of many unrolled integer-mixing kernels, runs
// two of them and checks the results exactly against the host. Used as the
// "OpenCL on NVIDIA" command workload: NVIDIA's OpenCL keeps compiled
// programs in the CUDA ComputeCache (CUDA_CACHE_PATH), which prewarm
// captures and installs.
//
// It dlopens libOpenCL.so.1 instead of linking it, so one binary built on
// the build host runs on a GPU host whatever its loader package is; the
// OpenCL headers are needed only to build it.
//
//   ocl_build_probe [--platform SUBSTRING] [--kernels N] [--rounds N]
//
// Prints one JSON line: platform, device, driver, build_s, first_result_s
// (process start to the first checked result), total_s. Exit 1 on any
// OpenCL error or wrong result.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
const auto g_start = Clock::now();

double
seconds_since(Clock::time_point t)
{
  return std::chrono::duration<double>(Clock::now() - t).count();
}

[[noreturn]] void
die(const std::string& what)
{
  std::fprintf(stderr, "ocl_build_probe: %s\n", what.c_str());
  std::exit(1);
}

void* g_library = nullptr;

template<typename F>
F
load(const char* name)
{
  void* symbol = ::dlsym(g_library, name);
  if (symbol == nullptr) {
    die(std::string("libOpenCL.so.1 has no ") + name);
  }
  return reinterpret_cast<F>(symbol);
}

#define PROBE_CL_FUNCTIONS(X)                                                                      \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext) \
  X(clCreateCommandQueue) X(clCreateProgramWithSource) X(clBuildProgram) X(clGetProgramBuildInfo) \
  X(clCreateKernel) X(clCreateBuffer) X(clSetKernelArg) X(clEnqueueNDRangeKernel)                 \
  X(clEnqueueReadBuffer) X(clFinish) X(clReleaseMemObject) X(clReleaseKernel)                     \
  X(clReleaseProgram) X(clReleaseCommandQueue) X(clReleaseContext)

#define PROBE_DECLARE(name) decltype(&::name) p_##name = nullptr;
PROBE_CL_FUNCTIONS(PROBE_DECLARE)
#undef PROBE_DECLARE

void
load_opencl()
{
  g_library = ::dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (g_library == nullptr) {
    die(std::string("cannot load libOpenCL.so.1: ") + ::dlerror());
  }
#define PROBE_LOAD(name) p_##name = load<decltype(&::name)>(#name);
  PROBE_CL_FUNCTIONS(PROBE_LOAD)
#undef PROBE_LOAD
}

void
check(cl_int status, const char* call)
{
  if (status != CL_SUCCESS) {
    die(std::string(call) + " failed with " + std::to_string(status));
  }
}

std::string
platform_string(cl_platform_id platform, cl_platform_info what)
{
  std::size_t size = 0;
  check(p_clGetPlatformInfo(platform, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string text(size, '\0');
  check(p_clGetPlatformInfo(platform, what, size, text.data(), nullptr), "clGetPlatformInfo");
  while (!text.empty() && text.back() == '\0') {
    text.pop_back();
  }
  return text;
}

std::string
device_string(cl_device_id device, cl_device_info what)
{
  std::size_t size = 0;
  check(p_clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string text(size, '\0');
  check(p_clGetDeviceInfo(device, what, size, text.data(), nullptr), "clGetDeviceInfo");
  while (!text.empty() && text.back() == '\0') {
    text.pop_back();
  }
  return text;
}

std::string
json_escape(const std::string& text)
{
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    if (static_cast<unsigned char>(c) >= 0x20) {
      out += c;
    }
  }
  return out;
}

std::uint32_t
multiplier(int kernel)
{
  return 2654435761u + 2u * static_cast<std::uint32_t>(kernel);
}

std::string
generate_source(int kernels, int rounds)
{
  std::string source;
  for (int k = 0; k < kernels; ++k) {
    source += "__kernel void mix_" + std::to_string(k) +
              "(__global const uint* in, __global uint* out)\n{\n"
              "  uint x = in[get_global_id(0)];\n"
              "  #pragma unroll\n"
              "  for (int r = 0; r < " +
              std::to_string(rounds) +
              "; ++r) {\n"
              "    x ^= x << 13; x ^= x >> 17; x ^= x << 5;\n"
              "    x = x * " +
              std::to_string(multiplier(k)) +
              "u + (uint)r;\n"
              "  }\n"
              "  out[get_global_id(0)] = x;\n}\n";
  }
  return source;
}

std::uint32_t
host_mix(std::uint32_t x, int kernel, int rounds)
{
  for (int r = 0; r < rounds; ++r) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x = x * multiplier(kernel) + static_cast<std::uint32_t>(r);
  }
  return x;
}

} // namespace

int
main(int argc, char** argv)
{
  std::string platform_filter = "NVIDIA";
  int kernels = 48;
  int rounds = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--platform" && i + 1 < argc) {
      platform_filter = argv[++i];
    } else if (arg == "--kernels" && i + 1 < argc) {
      kernels = std::atoi(argv[++i]);
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: ocl_build_probe [--platform SUBSTRING] [--kernels N] [--rounds N]\n");
      return 2;
    }
  }
  if (kernels < 1 || rounds < 1) {
    die("--kernels and --rounds must be positive");
  }
  load_opencl();

  cl_uint count = 0;
  check(p_clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(p_clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  cl_platform_id platform = nullptr;
  std::string names;
  for (auto* p : platforms) {
    const auto name = platform_string(p, CL_PLATFORM_NAME);
    names += (names.empty() ? "" : ", ") + name;
    if (platform == nullptr && name.find(platform_filter) != std::string::npos) {
      platform = p;
    }
  }
  if (platform == nullptr) {
    die("no OpenCL platform whose name contains '" + platform_filter + "' (have: " + names + ")");
  }
  cl_device_id device = nullptr;
  check(p_clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int status = CL_SUCCESS;
  cl_context context = p_clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  check(status, "clCreateContext");
  cl_command_queue queue = p_clCreateCommandQueue(context, device, 0, &status);
  check(status, "clCreateCommandQueue");

  const std::string source = generate_source(kernels, rounds);
  const char* text = source.c_str();
  cl_program program = p_clCreateProgramWithSource(context, 1, &text, nullptr, &status);
  check(status, "clCreateProgramWithSource");
  const auto build_start = Clock::now();
  status = p_clBuildProgram(program, 1, &device, "", nullptr, nullptr);
  const double build_s = seconds_since(build_start);
  if (status != CL_SUCCESS) {
    std::size_t size = 0;
    p_clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    p_clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    die("clBuildProgram failed with " + std::to_string(status) + ":\n" + log);
  }

  constexpr std::size_t n = 4096;
  std::vector<std::uint32_t> input(n);
  for (std::size_t i = 0; i < n; ++i) {
    input[i] = static_cast<std::uint32_t>(i * 2654435761u + 12345u);
  }
  cl_mem in = p_clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, input.data(), &status);
  check(status, "clCreateBuffer");
  cl_mem out = p_clCreateBuffer(context, CL_MEM_WRITE_ONLY, n * 4, nullptr, &status);
  check(status, "clCreateBuffer");
  double first_result_s = 0;
  for (const int k : {0, kernels - 1}) {
    cl_kernel kernel = p_clCreateKernel(program, ("mix_" + std::to_string(k)).c_str(), &status);
    check(status, "clCreateKernel");
    check(p_clSetKernelArg(kernel, 0, sizeof in, &in), "clSetKernelArg");
    check(p_clSetKernelArg(kernel, 1, sizeof out, &out), "clSetKernelArg");
    const std::size_t global = n;
    check(p_clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    std::vector<std::uint32_t> result(n);
    check(p_clEnqueueReadBuffer(queue, out, CL_TRUE, 0, n * 4, result.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    for (std::size_t i = 0; i < n; ++i) {
      if (result[i] != host_mix(input[i], k, rounds)) {
        die("mix_" + std::to_string(k) + " gave a wrong result at " + std::to_string(i));
      }
    }
    if (first_result_s == 0) {
      first_result_s = seconds_since(g_start);
    }
    p_clReleaseKernel(kernel);
  }
  check(p_clFinish(queue), "clFinish");
  std::printf("{\"platform\": \"%s\", \"device\": \"%s\", \"driver\": \"%s\", \"kernels\": %d, \"rounds\": %d, "
              "\"build_s\": %.4f, \"first_result_s\": %.4f, \"total_s\": %.4f}\n",
              json_escape(platform_string(platform, CL_PLATFORM_NAME)).c_str(),
              json_escape(device_string(device, CL_DEVICE_NAME)).c_str(),
              json_escape(device_string(device, CL_DRIVER_VERSION)).c_str(), kernels, rounds, build_s,
              first_result_s, seconds_since(g_start));
  p_clReleaseMemObject(in);
  p_clReleaseMemObject(out);
  p_clReleaseProgram(program);
  p_clReleaseCommandQueue(queue);
  p_clReleaseContext(context);
  return 0;
}
