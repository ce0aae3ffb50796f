// SPDX-License-Identifier: Apache-2.0
// An OpenCL application that knows nothing of prewarm, for the layer's
// tests: each scenario builds programs the way real applications do and
// checks the kernels' results, so a served program that computes wrong
// answers fails. It reports what it saw on stdout, one "name value" line per
// check, for the test to compare across record and serve runs.
//   layer_test_app build         clCreateProgramWithSource + clBuildProgram (with a callback),
//                                queries, kernels, CL_KERNEL_PROGRAM, retain/release
//   layer_test_app compile-link  two sources + a header program, clCompileProgram + clLinkProgram
//   layer_test_app threads N     N threads, each building its own program
//   layer_test_app devices       one program built for every device of the first platform
//   layer_test_app dlopen        the same as build, with libOpenCL.so.1 dlopen()ed
//   layer_test_app include DIR [macro]  a source that #includes value.h from `-I DIR` (macro: named
//                                by token pasting, which the layer does not expand); prints what the
//                                kernel computed
//   layer_test_app program-first a kernel outlives its program: the application releases the
//                                program first (its last reference; the kernel still holds one), then
//                                the kernel (the driver frees the program), then the context
//   layer_test_app exit          build and run, then exit with the program and context alive (as
//                                OpenCV does: its program cache lives until exit)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <vector>

namespace {

#define CHECK(call)                                                                          \
  do {                                                                                       \
    const cl_int status_ = (call);                                                           \
    if (status_ != CL_SUCCESS) {                                                             \
      std::fprintf(stderr, "layer_test_app: %s failed: %d (line %d)\n", #call, status_, __LINE__); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

void
require(bool ok, const char* what)
{
  if (!ok) {
    std::fprintf(stderr, "layer_test_app: check failed: %s\n", what);
    std::exit(1);
  }
}

const char* k_source = R"(
__kernel void scale(__global float* data, float factor) {
  size_t i = get_global_id(0);
  data[i] = data[i] * factor + (float)i;
}
__kernel void offset(__global float* data) { data[get_global_id(0)] += 1.0f; }
)";

const char* k_header = "#define SHIFT 3\n";
const char* k_unit_a = R"(
#include "shift.h"
int shifted(int x) { return x + SHIFT; }
)";
const char* k_unit_b = R"(
int shifted(int x);
__kernel void apply(__global int* data) { size_t i = get_global_id(0); data[i] = shifted(data[i]); }
)";

struct Cl
{
  cl_platform_id platform = nullptr;
  std::vector<cl_device_id> devices;
  cl_context context = nullptr;
};

Cl
open_cl(bool all_devices)
{
  Cl cl;
  CHECK(clGetPlatformIDs(1, &cl.platform, nullptr));
  cl_uint count = 0;
  CHECK(clGetDeviceIDs(cl.platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count));
  cl.devices.resize(all_devices ? count : 1);
  CHECK(clGetDeviceIDs(cl.platform, CL_DEVICE_TYPE_ALL, static_cast<cl_uint>(cl.devices.size()), cl.devices.data(), nullptr));
  cl_int status = CL_SUCCESS;
  cl.context = clCreateContext(nullptr, static_cast<cl_uint>(cl.devices.size()), cl.devices.data(), nullptr, nullptr, &status);
  CHECK(status);
  return cl;
}

std::string
program_string(cl_program program, cl_program_info what)
{
  std::size_t size = 0;
  CHECK(clGetProgramInfo(program, what, 0, nullptr, &size));
  std::string value(size, '\0');
  CHECK(clGetProgramInfo(program, what, size, value.data(), nullptr));
  value.resize(std::strlen(value.c_str()));
  return value;
}

float
run_scale(const Cl& cl, cl_device_id device, cl_program program, std::size_t local)
{
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, "scale", &status);
  CHECK(status);
  cl_program owner = nullptr;
  CHECK(clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof owner, &owner, nullptr));
  require(owner == program, "CL_KERNEL_PROGRAM is the application's program");
  cl_command_queue queue = clCreateCommandQueueWithProperties(cl.context, device, nullptr, &status);
  CHECK(status);
  std::vector<float> data(256, 2.0f);
  cl_mem buffer = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(float), data.data(), &status);
  CHECK(status);
  const float factor = 1.5f;
  CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
  CHECK(clSetKernelArg(kernel, 1, sizeof factor, &factor));
  const std::size_t global = data.size();
  CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  CHECK(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, data.size() * sizeof(float), data.data(), 0, nullptr, nullptr));
  float sum = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    require(data[i] == 3.0f + static_cast<float>(i), "scale computed 2*1.5+i");
    sum += data[i];
  }
  CHECK(clReleaseMemObject(buffer));
  CHECK(clReleaseCommandQueue(queue));
  CHECK(clReleaseKernel(kernel));
  return sum;
}

int g_callbacks = 0;
void CL_CALLBACK
on_built(cl_program, void* user)
{
  ++*static_cast<int*>(user);
}

int
scenario_build()
{
  const auto cl = open_cl(false);
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(cl.context, 1, &k_source, nullptr, &status);
  CHECK(status);
  CHECK(clBuildProgram(program, 1, cl.devices.data(), "-cl-fast-relaxed-math", on_built, &g_callbacks));
  require(g_callbacks == 1, "the build callback ran once");
  cl_build_status build_status = CL_BUILD_NONE;
  CHECK(clGetProgramBuildInfo(program, cl.devices[0], CL_PROGRAM_BUILD_STATUS, sizeof build_status, &build_status, nullptr));
  require(build_status == CL_BUILD_SUCCESS, "CL_PROGRAM_BUILD_STATUS is success");
  require(program_string(program, CL_PROGRAM_SOURCE) == k_source, "CL_PROGRAM_SOURCE is the application's source");
  std::printf("kernel-names %s\n", program_string(program, CL_PROGRAM_KERNEL_NAMES).c_str());
  std::size_t num_kernels = 0;
  CHECK(clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof num_kernels, &num_kernels, nullptr));
  std::printf("num-kernels %zu\n", num_kernels);
  cl_kernel kernels[4] = {};
  cl_uint created = 0;
  CHECK(clCreateKernelsInProgram(program, 4, kernels, &created));
  std::printf("kernels-in-program %u\n", created);
  for (cl_uint i = 0; i < created; ++i) {
    CHECK(clReleaseKernel(kernels[i]));
  }
  CHECK(clRetainProgram(program));
  cl_uint references = 0;
  CHECK(clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof references, &references, nullptr));
  std::printf("reference-count %u\n", references);
  CHECK(clReleaseProgram(program));
  // Two local sizes: PoCL generates a work-group function for each, lazily.
  std::printf("sum %.1f\n", static_cast<double>(run_scale(cl, cl.devices[0], program, 16) + run_scale(cl, cl.devices[0], program, 64)));
  CHECK(clReleaseProgram(program));
  CHECK(clReleaseContext(cl.context));
  std::printf("ok build\n");
  return 0;
}

int
scenario_compile_link()
{
  const auto cl = open_cl(false);
  cl_int status = CL_SUCCESS;
  cl_program header = clCreateProgramWithSource(cl.context, 1, &k_header, nullptr, &status);
  CHECK(status);
  cl_program a = clCreateProgramWithSource(cl.context, 1, &k_unit_a, nullptr, &status);
  CHECK(status);
  cl_program b = clCreateProgramWithSource(cl.context, 1, &k_unit_b, nullptr, &status);
  CHECK(status);
  const char* header_name = "shift.h";
  CHECK(clCompileProgram(a, 1, cl.devices.data(), "-DUNUSED=1", 1, &header, &header_name, nullptr, nullptr));
  CHECK(clCompileProgram(b, 1, cl.devices.data(), "", 0, nullptr, nullptr, nullptr, nullptr));
  for (cl_program unit : {a, b}) {
    cl_build_status build_status = CL_BUILD_NONE;
    CHECK(clGetProgramBuildInfo(unit, cl.devices[0], CL_PROGRAM_BUILD_STATUS, sizeof build_status, &build_status, nullptr));
    require(build_status == CL_BUILD_SUCCESS, "a compiled unit reports success");
    cl_program_binary_type type = 0;
    CHECK(clGetProgramBuildInfo(unit, cl.devices[0], CL_PROGRAM_BINARY_TYPE, sizeof type, &type, nullptr));
    require(type == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, "a compiled unit is a compiled object");
  }
  const cl_program inputs[] = {a, b};
  cl_program linked = clLinkProgram(cl.context, 1, cl.devices.data(), "", 2, inputs, nullptr, nullptr, &status);
  CHECK(status);
  cl_kernel kernel = clCreateKernel(linked, "apply", &status);
  CHECK(status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(cl.context, cl.devices[0], nullptr, &status);
  CHECK(status);
  std::vector<int> data(64);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<int>(i);
  }
  cl_mem buffer = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(int), data.data(), &status);
  CHECK(status);
  CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
  const std::size_t global = data.size();
  CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  CHECK(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, data.size() * sizeof(int), data.data(), 0, nullptr, nullptr));
  for (std::size_t i = 0; i < data.size(); ++i) {
    require(data[i] == static_cast<int>(i) + 3, "apply computed i+3 through the header's SHIFT");
  }
  CHECK(clReleaseMemObject(buffer));
  CHECK(clReleaseCommandQueue(queue));
  CHECK(clReleaseKernel(kernel));
  for (cl_program p : {linked, a, b, header}) {
    CHECK(clReleaseProgram(p));
  }
  CHECK(clReleaseContext(cl.context));
  std::printf("ok compile-link\n");
  return 0;
}

int
scenario_threads(int count)
{
  const auto cl = open_cl(false);
  std::vector<std::thread> threads;
  std::vector<float> sums(static_cast<std::size_t>(count));
  for (int t = 0; t < count; ++t) {
    threads.emplace_back([&, t] {
      // A different option per thread: each is its own program and record.
      const std::string options = "-DTHREAD=" + std::to_string(t);
      cl_int status = CL_SUCCESS;
      cl_program program = clCreateProgramWithSource(cl.context, 1, &k_source, nullptr, &status);
      CHECK(status);
      CHECK(clBuildProgram(program, 1, cl.devices.data(), options.c_str(), nullptr, nullptr));
      sums[static_cast<std::size_t>(t)] = run_scale(cl, cl.devices[0], program, 32);
      CHECK(clReleaseProgram(program));
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  for (float sum : sums) {
    require(sum == sums.front(), "every thread computed the same sum");
  }
  CHECK(clReleaseContext(cl.context));
  std::printf("ok threads %d\n", count);
  return 0;
}

int
scenario_devices()
{
  const auto cl = open_cl(true);
  std::printf("devices %zu\n", cl.devices.size());
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(cl.context, 1, &k_source, nullptr, &status);
  CHECK(status);
  CHECK(clBuildProgram(program, 0, nullptr, "", nullptr, nullptr));
  float total = 0;
  for (auto device : cl.devices) {
    total += run_scale(cl, device, program, 16);
  }
  std::printf("sum %.1f\n", static_cast<double>(total));
  CHECK(clReleaseProgram(program));
  CHECK(clReleaseContext(cl.context));
  std::printf("ok devices\n");
  return 0;
}

// The OpenCL entry points looked up on a dlopen() handle, as hashcat and
// OpenCV do: an LD_PRELOAD interposer never sees these calls, a layer does.
int
scenario_dlopen()
{
  void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  require(lib != nullptr, "dlopen libOpenCL.so.1");
#define LOAD(name) auto name##_p = reinterpret_cast<decltype(&name)>(dlsym(lib, #name)); require(name##_p != nullptr, #name)
  LOAD(clGetPlatformIDs);
  LOAD(clGetDeviceIDs);
  LOAD(clCreateContext);
  LOAD(clCreateProgramWithSource);
  LOAD(clBuildProgram);
  LOAD(clCreateKernel);
  LOAD(clReleaseKernel);
  LOAD(clReleaseProgram);
  LOAD(clReleaseContext);
  cl_platform_id platform = nullptr;
  CHECK(clGetPlatformIDs_p(1, &platform, nullptr));
  cl_device_id device = nullptr;
  CHECK(clGetDeviceIDs_p(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr));
  cl_int status = CL_SUCCESS;
  cl_context context = clCreateContext_p(nullptr, 1, &device, nullptr, nullptr, &status);
  CHECK(status);
  cl_program program = clCreateProgramWithSource_p(context, 1, &k_source, nullptr, &status);
  CHECK(status);
  CHECK(clBuildProgram_p(program, 1, &device, "-DDLOPEN=1", nullptr, nullptr));
  cl_kernel kernel = clCreateKernel_p(program, "scale", &status);
  CHECK(status);
  CHECK(clReleaseKernel_p(kernel));
  CHECK(clReleaseProgram_p(program));
  CHECK(clReleaseContext_p(context));
  std::printf("ok dlopen\n");
  return 0;
}

// The kernel's numbers come from headers on disk: a binary built with
// other headers computes other numbers.
int
scenario_include(const std::string& dir, bool computed)
{
  const auto cl = open_cl(false);
  const std::string source = std::string(computed ? "#define JOIN(a, b) a ## b\n#define VALUE_H \"value.h\"\n#include JOIN(VALUE, _H)\n"
                                                      : "#include \"value.h\"\n") +
                             "__kernel void fill(__global int* data) { size_t i = get_global_id(0); data[i] = VALUE * (int)i + OFFSET; }\n";
  const char* text = source.c_str();
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(cl.context, 1, &text, nullptr, &status);
  CHECK(status);
  const std::string options = "-I " + dir;
  CHECK(clBuildProgram(program, 1, cl.devices.data(), options.c_str(), nullptr, nullptr));
  cl_kernel kernel = clCreateKernel(program, "fill", &status);
  CHECK(status);
  cl_command_queue queue = clCreateCommandQueueWithProperties(cl.context, cl.devices[0], nullptr, &status);
  CHECK(status);
  std::vector<int> data(64, 0);
  cl_mem buffer = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(int), data.data(), &status);
  CHECK(status);
  CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
  const std::size_t global = data.size();
  CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  CHECK(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, data.size() * sizeof(int), data.data(), 0, nullptr, nullptr));
  long sum = 0;
  for (int v : data) {
    sum += v;
  }
  std::printf("first %d %d\nsum %ld\n", data[0], data[1], sum);
  CHECK(clReleaseMemObject(buffer));
  CHECK(clReleaseCommandQueue(queue));
  CHECK(clReleaseKernel(kernel));
  CHECK(clReleaseProgram(program));
  CHECK(clReleaseContext(cl.context));
  std::printf("ok include\n");
  return 0;
}

int
scenario_program_first()
{
  const auto cl = open_cl(false);
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(cl.context, 1, &k_source, nullptr, &status);
  CHECK(status);
  CHECK(clBuildProgram(program, 1, cl.devices.data(), "-DPROGRAM_FIRST=1", nullptr, nullptr));
  cl_kernel kept = clCreateKernel(program, "scale", &status);
  CHECK(status);
  std::printf("sum %.1f\n", static_cast<double>(run_scale(cl, cl.devices[0], program, 16)));
  CHECK(clReleaseProgram(program)); // the application's last reference to the program
  cl_uint arguments = 0;
  CHECK(clGetKernelInfo(kept, CL_KERNEL_NUM_ARGS, sizeof arguments, &arguments, nullptr));
  std::printf("kernel args %u\n", arguments);
  CHECK(clReleaseKernel(kept)); // the driver frees the program here
  CHECK(clReleaseContext(cl.context));
  std::printf("ok program-first\n");
  return 0;
}

int
scenario_exit()
{
  const auto cl = open_cl(false);
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(cl.context, 1, &k_source, nullptr, &status);
  CHECK(status);
  CHECK(clBuildProgram(program, 1, cl.devices.data(), "-DKEPT_UNTIL_EXIT=1", nullptr, nullptr));
  std::printf("sum %.1f\n", static_cast<double>(run_scale(cl, cl.devices[0], program, 16)));
  std::printf("ok exit\n");
  return 0; // the program and its context are never released
}

} // namespace

int
main(int argc, char** argv)
{
  const std::string scenario = argc > 1 ? argv[1] : "";
  if (scenario == "build") {
    return scenario_build();
  }
  if (scenario == "compile-link") {
    return scenario_compile_link();
  }
  if (scenario == "threads") {
    return scenario_threads(argc > 2 ? std::atoi(argv[2]) : 4);
  }
  if (scenario == "devices") {
    return scenario_devices();
  }
  if (scenario == "dlopen") {
    return scenario_dlopen();
  }
  if (scenario == "include" && argc > 2) {
    return scenario_include(argv[2], argc > 3 && std::string(argv[3]) == "macro");
  }
  if (scenario == "program-first") {
    return scenario_program_first();
  }
  if (scenario == "exit") {
    return scenario_exit();
  }
  std::fprintf(stderr, "usage: layer_test_app build|compile-link|threads N|devices|dlopen|include DIR [macro]|program-first|exit\n");
  return 2;
}
