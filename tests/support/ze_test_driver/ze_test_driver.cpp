// SPDX-License-Identifier: Apache-2.0
// TEST DOUBLE, NOT A GPU DRIVER. A Level Zero driver library that the real
// loader (libze_loader 1.8.12) loads with ZE_ENABLE_ALT_DRIVERS=<this .so>.
// It reports ONE fake Intel device named "prewarm test double (not a GPU)",
// accepts modules, rejects native binaries that are not a zebin for its
// device (so the SPIR-V fallback can be tested), and by default "runs"
// kernels by recording the launch; memory is host memory and copies are
// memcpy. Nothing it does says anything about real hardware.
//
// Opt-in execution (both PREWARM_ZE_TEST_EXECUTE_* set): launches really run,
// but NOT the module's zebin or SPIR-V. The double looks the module's bytes up
// in an AOT programs store (runtime/level_zero/aot_programs.hpp), takes the
// OpenCL C source and options its .meta names, builds that with the FIRST
// OpenCL device (the PoCL CPU device here) and runs it there. So the Level
// Zero path (module bytes, kernel names, argument order and sizes, group
// sizes, memory, copies, command list order) is exercised with real numerics,
// while the Intel binary itself is never executed: this is still a test double.
//
// The loader refuses a driver (zeInit -> 0x78000001) unless every
// ze/zet/zesGet*ProcAddrTable entry point it asks for is exported, so all 53
// of the 1.8.12 headers are; the ones for APIs this double does not implement
// hand back an empty table (the loader then answers "unsupported").
//
// Environment:
//   PREWARM_ZE_TEST_DEVICE_ID       PCI device id, "0x56a5" (default 0x56a5)
//   PREWARM_ZE_TEST_PRODUCT_FAMILY  decimal product family a native zebin must carry in
//                                   its .note.intelgt.compat note (type 1), e.g. 1270
//                                   (what ocloc 22.43 writes for acm-g10/acm-g11). Unset:
//                                   any zebin is accepted.
//   PREWARM_ZE_TEST_DRIVER_VERSION  "22.43.24595" (default), reported in NEO's encoding
//                                   (major << 24 | minor << 16 | build & 0xffff)
//   PREWARM_ZE_TEST_LOG             file to append one line per recorded call
//   PREWARM_ZE_TEST_DEVICE_COUNT    0 hides the device (default 1)
//   PREWARM_ZE_TEST_EXECUTE_SOURCES   a directory of OpenCL C sources (the repo's kernels/)
//                                   (`#include "x.clh"` lines expanded as the build
//                                   embeds them: cmake/embed_files.cmake)
//   PREWARM_ZE_TEST_EXECUTE_PROGRAMS  a programs directory holding the AOT store
//                                   (aot/<ocloc-device>/<key>.{zebin,spv,meta}).
//                                   Execution is on only when BOTH are set; they are
//                                   read at every zeModuleCreate (a module keeps what
//                                   it was created with) and zeDeviceGetModuleProperties.
//   PREWARM_ZE_TEST_FP16            1: report ZE_DEVICE_MODULE_FLAG_FP16 even when not
//                                   executing (executing: iff PoCL lists cl_khr_fp16)
//
// Log lines (space-separated key=value after the event name):
//   init
//   module-create format=native|spirv size=N sha256=HEX flags="..." result=accepted kernels=a,b
//   module-create format=native size=N sha256=HEX flags="" result=rejected reason="..."
//     (executing: " execute=yes" appended; accepted ones also get source="gemm.cl")
//   kernel-create name=K
//   launch kernel=K groups=X,Y,Z group-size=X,Y,Z args=N list=immediate|regular
//     (executing: " executed=yes", or " executed=no error=\"...\"" naming the CL call/error)
//   copy bytes=N
//   set-argument kernel=K index=I [size=N] error="..."   (executing: a refused argument)
//   kernel-create name=K error="clCreateKernel: ..."     (executing: OpenCL refused the kernel)
//
// Executing, in detail: arguments are captured at zeCommandListAppendLaunchKernel
// (as real Level Zero does) and set on the cl_kernel when the list executes
// (regular lists: zeCommandQueueExecuteCommandLists; immediate lists: at
// append); a pointer-sized value equal to the BASE of one of the double's
// allocations becomes that allocation's CL_MEM_USE_HOST_PTR buffer (made on
// first use; allocations are page aligned for it); __global arguments that are
// not such a pointer (nor null) are refused. Each launch is
// clEnqueueNDRangeKernel(work_dim 3, global = groups * group size, local =
// group size) + clFinish. The program is built with the store's options plus
// -cl-kernel-arg-info (for the argument kinds).
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_api.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_api.h>
#include <level_zero/zet_ddi.h>

#include <openssl/evp.h>

#if PREWARM_ZE_TEST_WITH_OPENCL
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#else
// Built without OpenCL: execution is refused with that reason. The handle
// types only keep the object layouts the same.
using cl_int = int;
using cl_uint = unsigned;
using cl_program = void*;
using cl_kernel = void*;
using cl_mem = void*;
#endif

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- settings
std::string
env_or(const char* name, const char* fallback)
{
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

uint32_t
device_id()
{
  return static_cast<uint32_t>(std::strtoul(env_or("PREWARM_ZE_TEST_DEVICE_ID", "0x56a5").c_str(), nullptr, 0));
}

std::optional<uint32_t>
expected_product_family()
{
  const char* value = std::getenv("PREWARM_ZE_TEST_PRODUCT_FAMILY");
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  return static_cast<uint32_t>(std::strtoul(value, nullptr, 0));
}

uint32_t
encoded_driver_version()
{
  unsigned major = 0, minor = 0, build = 0;
  std::sscanf(env_or("PREWARM_ZE_TEST_DRIVER_VERSION", "22.43.24595").c_str(), "%u.%u.%u", &major, &minor, &build);
  return ((major & 0xffu) << 24) | ((minor & 0xffu) << 16) | (build & 0xffffu);
}

// ---------------------------------------------------------------- log
std::mutex g_log_mutex;

void
log_line(const std::string& line)
{
  const char* path = std::getenv("PREWARM_ZE_TEST_LOG");
  if (path == nullptr || *path == '\0') {
    return;
  }
  std::scoped_lock lock(g_log_mutex);
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    return;
  }
  std::string text = line + "\n";
  [[maybe_unused]] auto written = ::write(fd, text.data(), text.size());
  ::close(fd);
}

std::string
sha256_hex(const void* data, size_t size)
{
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data, size, digest, &length, EVP_sha256(), nullptr) != 1) {
    return "error";
  }
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < length; ++i) {
    hex += k_hex[digest[i] >> 4];
    hex += k_hex[digest[i] & 15];
  }
  return hex;
}

std::string
in_quotes(std::string_view text)
{
  std::string out = "\"";
  for (char c : text) {
    out += (c == '"' || c == '\n') ? '\'' : c;
  }
  return out + "\"";
}

// ---------------------------------------------------------------- execution settings
struct ExecutionSettings
{
  std::string sources;  // PREWARM_ZE_TEST_EXECUTE_SOURCES: OpenCL C sources
  std::string programs; // PREWARM_ZE_TEST_EXECUTE_PROGRAMS: holds aot/<device>/<key>.*
};

// Both variables or nothing: one alone is a mistake in the test's setup, and
// executing half-configured would hide it (module creation says which is
// missing only when both are set and something is not found).
std::optional<ExecutionSettings>
execution_settings()
{
  const char* sources = std::getenv("PREWARM_ZE_TEST_EXECUTE_SOURCES");
  const char* programs = std::getenv("PREWARM_ZE_TEST_EXECUTE_PROGRAMS");
  if (sources == nullptr || *sources == '\0' || programs == nullptr || *programs == '\0') {
    return std::nullopt;
  }
  return ExecutionSettings{sources, programs};
}

std::optional<std::string>
read_whole_file(const fs::path& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    return std::nullopt;
  }
  return bytes;
}

// ---------------------------------------------------------------- OpenCL (PoCL) runtime
#if PREWARM_ZE_TEST_WITH_OPENCL
std::string
cl_error_name(cl_int code)
{
  switch (code) {
#define PW_CL_NAME(name) case name: return #name;
    PW_CL_NAME(CL_SUCCESS)
    PW_CL_NAME(CL_DEVICE_NOT_FOUND)
    PW_CL_NAME(CL_OUT_OF_RESOURCES)
    PW_CL_NAME(CL_OUT_OF_HOST_MEMORY)
    PW_CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    PW_CL_NAME(CL_BUILD_PROGRAM_FAILURE)
    PW_CL_NAME(CL_INVALID_VALUE)
    PW_CL_NAME(CL_INVALID_DEVICE)
    PW_CL_NAME(CL_INVALID_CONTEXT)
    PW_CL_NAME(CL_INVALID_COMMAND_QUEUE)
    PW_CL_NAME(CL_INVALID_HOST_PTR)
    PW_CL_NAME(CL_INVALID_MEM_OBJECT)
    PW_CL_NAME(CL_INVALID_BUILD_OPTIONS)
    PW_CL_NAME(CL_INVALID_PROGRAM)
    PW_CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    PW_CL_NAME(CL_INVALID_KERNEL_NAME)
    PW_CL_NAME(CL_INVALID_KERNEL)
    PW_CL_NAME(CL_INVALID_ARG_INDEX)
    PW_CL_NAME(CL_INVALID_ARG_VALUE)
    PW_CL_NAME(CL_INVALID_ARG_SIZE)
    PW_CL_NAME(CL_INVALID_KERNEL_ARGS)
    PW_CL_NAME(CL_INVALID_WORK_DIMENSION)
    PW_CL_NAME(CL_INVALID_WORK_GROUP_SIZE)
    PW_CL_NAME(CL_INVALID_WORK_ITEM_SIZE)
    PW_CL_NAME(CL_INVALID_GLOBAL_OFFSET)
    PW_CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    PW_CL_NAME(CL_INVALID_BUFFER_SIZE)
    PW_CL_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
#undef PW_CL_NAME
    default: return "CL error " + std::to_string(code);
  }
}

// What a failed OpenCL call becomes at the Level Zero API.
ze_result_t
ze_result_for(cl_int code)
{
  switch (code) {
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE: return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    case CL_INVALID_ARG_SIZE: return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    case CL_INVALID_ARG_INDEX: return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    case CL_INVALID_ARG_VALUE:
    case CL_INVALID_MEM_OBJECT:
    case CL_INVALID_KERNEL_ARGS: return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    case CL_OUT_OF_HOST_MEMORY: return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    default: return ZE_RESULT_ERROR_UNKNOWN;
  }
}

struct OpenClRuntime
{
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string name;       // "cpu-haswell-... (Portable Computing Language)"
  std::string extensions; // " cl_khr_fp64 cl_khr_fp16 ... " (space on both ends)
  cl_device_fp_config fp32 = 0;
  cl_device_fp_config fp64 = 0;
  size_t max_parameter_size = 0;
  std::string error; // why there is no device, when there is none

  bool has_extension(std::string_view name_) const
  {
    return extensions.find(" " + std::string(name_) + " ") != std::string::npos;
  }
};

std::string
device_string(cl_device_id device, cl_device_info what)
{
  size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS) {
    return {};
  }
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') {
    text.pop_back();
  }
  return text;
}

// The FIRST OpenCL device (PoCL's CPU device: the only ICD in CI), set up on
// first use and kept for the life of the process (a test double: nothing is
// torn down at exit).
const OpenClRuntime&
opencl()
{
  static const OpenClRuntime runtime = [] {
    OpenClRuntime r;
    cl_uint platform_count = 0;
    if (clGetPlatformIDs(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0) {
      r.error = "no OpenCL platform (is an ICD such as pocl-opencl-icd installed?)";
      return r;
    }
    std::vector<cl_platform_id> platforms(platform_count);
    clGetPlatformIDs(platform_count, platforms.data(), nullptr);
    for (auto platform : platforms) {
      cl_uint count = 0;
      if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &r.device, &count) == CL_SUCCESS && count > 0) {
        break;
      }
      r.device = nullptr;
    }
    if (r.device == nullptr) {
      r.error = "no OpenCL device on any of " + std::to_string(platform_count) + " platform(s)";
      return r;
    }
    cl_int error = CL_SUCCESS;
    r.context = clCreateContext(nullptr, 1, &r.device, nullptr, nullptr, &error);
    if (error != CL_SUCCESS) {
      r.error = "clCreateContext: " + cl_error_name(error);
      r.device = nullptr;
      return r;
    }
    r.queue = clCreateCommandQueue(r.context, r.device, 0, &error);
    if (error != CL_SUCCESS) {
      r.error = "clCreateCommandQueue: " + cl_error_name(error);
      r.device = nullptr;
      return r;
    }
    r.name = device_string(r.device, CL_DEVICE_NAME);
    r.extensions = " " + device_string(r.device, CL_DEVICE_EXTENSIONS) + " ";
    clGetDeviceInfo(r.device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof r.fp32, &r.fp32, nullptr);
    if (r.has_extension("cl_khr_fp64")) {
      clGetDeviceInfo(r.device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof r.fp64, &r.fp64, nullptr);
    }
    clGetDeviceInfo(r.device, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof r.max_parameter_size, &r.max_parameter_size,
                    nullptr);
    return r;
  }();
  return runtime;
}

ze_device_fp_flags_t
ze_fp_flags(cl_device_fp_config config)
{
  ze_device_fp_flags_t flags = 0;
  if (config & CL_FP_DENORM) flags |= ZE_DEVICE_FP_FLAG_DENORM;
  if (config & CL_FP_INF_NAN) flags |= ZE_DEVICE_FP_FLAG_INF_NAN;
  if (config & CL_FP_ROUND_TO_NEAREST) flags |= ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST;
  if (config & CL_FP_ROUND_TO_ZERO) flags |= ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO;
  if (config & CL_FP_ROUND_TO_INF) flags |= ZE_DEVICE_FP_FLAG_ROUND_TO_INF;
  if (config & CL_FP_FMA) flags |= ZE_DEVICE_FP_FLAG_FMA;
  if (config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) flags |= ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT;
  if (config & CL_FP_SOFT_FLOAT) flags |= ZE_DEVICE_FP_FLAG_SOFT_FLOAT;
  return flags;
}
#endif

// ---------------------------------------------------------------- objects
// Every handle is a pointer to one of these; the loader (1.8.12, one driver)
// passes them through unchanged.
struct DriverObject { int unused = 0; };
struct DeviceObject { int unused = 0; };
DriverObject g_driver;
DeviceObject g_device;

struct ContextObject { int unused = 0; };

struct ModuleObject
{
  ze_module_format_t format = ZE_MODULE_FORMAT_IL_SPIRV;
  std::string bytes;
  std::vector<std::string> kernels;
  // Executing: the OpenCL program built from the source the store's .meta names.
  cl_program program = nullptr;
  std::string source_name;

  ModuleObject() = default;
  ModuleObject(const ModuleObject&) = delete;
  ModuleObject& operator=(const ModuleObject&) = delete;
  ~ModuleObject()
  {
#if PREWARM_ZE_TEST_WITH_OPENCL
    if (program != nullptr) clReleaseProgram(program);
#endif
  }
};

struct BuildLogObject
{
  std::string text;
};

// One zeKernelSetArgumentValue: the bytes, or only a size for a __local buffer.
struct KernelArgument
{
  size_t size = 0;
  bool local = false;
  std::string bytes;
};

enum class PointerArgument { yes, no, unknown };

struct KernelObject
{
  ModuleObject* module = nullptr;
  std::string name;
  std::map<uint32_t, KernelArgument> args;
  uint32_t group_size[3] = {1, 1, 1};
  // Executing: the OpenCL kernel, its argument count and which arguments are
  // __global/__constant pointers (from clGetKernelArgInfo, when it answers).
  cl_kernel kernel = nullptr;
  cl_uint argument_count = 0;
  std::vector<PointerArgument> pointer_arguments;

  KernelObject() = default;
  KernelObject(const KernelObject&) = delete;
  KernelObject& operator=(const KernelObject&) = delete;
  ~KernelObject()
  {
#if PREWARM_ZE_TEST_WITH_OPENCL
    if (kernel != nullptr) clReleaseKernel(kernel);
#endif
  }
};

struct CommandListObject
{
  bool immediate = false;
  // Run in order when the list is executed; the first failure stops the list.
  std::vector<std::function<ze_result_t()>> commands;
};

struct QueueObject { int unused = 0; };
struct FenceObject { bool signaled = false; };

template<typename Handle, typename Object>
Object*
as(Handle handle)
{
  return reinterpret_cast<Object*>(handle);
}

// ---------------------------------------------------------------- memory
// Host memory, page aligned so that an OpenCL buffer over it
// (CL_MEM_USE_HOST_PTR, made on first use as a kernel argument) is the same
// memory on PoCL's CPU device, not a copy.
struct Allocation
{
  size_t size = 0;
  cl_mem memory = nullptr;
};

constexpr size_t k_page = 4096;
std::mutex g_memory_mutex;
std::map<void*, Allocation> g_allocations;

// Serializes executions and argument checks on the shared cl_kernel objects.
std::mutex g_execute_mutex;

#if PREWARM_ZE_TEST_WITH_OPENCL
// The OpenCL buffer over the allocation that starts at `base`; null with
// `why` set when `base` is not the start of a live allocation of this double.
cl_mem
buffer_of(void* base, std::string& why)
{
  std::scoped_lock lock(g_memory_mutex);
  auto it = g_allocations.find(base);
  if (it == g_allocations.end()) {
    char text[64];
    std::snprintf(text, sizeof text, "%p", base);
    why = std::string("pointer ") + text + " is not the base of a live allocation of this double";
    return nullptr;
  }
  if (it->second.memory == nullptr) {
    cl_int error = CL_SUCCESS;
    it->second.memory = clCreateBuffer(opencl().context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                                       std::max<size_t>(it->second.size, 1), base, &error);
    if (error != CL_SUCCESS) {
      why = "clCreateBuffer(CL_MEM_USE_HOST_PTR, " + std::to_string(it->second.size) + " bytes): " +
            cl_error_name(error);
      it->second.memory = nullptr;
    }
  }
  return it->second.memory;
}

// Sets argument `index` on the kernel's cl_kernel. A pointer-sized value
// that is the base of an allocation becomes that allocation's buffer; a
// __global/__constant argument must be such a pointer or null.
cl_int
apply_argument(const KernelObject& kernel, uint32_t index, const KernelArgument& argument, std::string& why)
{
  if (argument.local) {
    return clSetKernelArg(kernel.kernel, index, argument.size, nullptr);
  }
  const auto pointer = index < kernel.pointer_arguments.size() ? kernel.pointer_arguments[index]
                                                               : PointerArgument::unknown;
  if (argument.size == sizeof(void*) && pointer != PointerArgument::no) {
    void* value = nullptr;
    std::memcpy(&value, argument.bytes.data(), sizeof value);
    cl_mem buffer = nullptr;
    if (value != nullptr) {
      std::string not_ours;
      buffer = buffer_of(value, not_ours);
      if (buffer == nullptr && pointer == PointerArgument::yes) {
        why = not_ours;
        return CL_INVALID_MEM_OBJECT;
      }
    }
    if (buffer != nullptr || pointer == PointerArgument::yes) {
      return clSetKernelArg(kernel.kernel, index, sizeof buffer, &buffer);
    }
  }
  return clSetKernelArg(kernel.kernel, index, argument.size, argument.bytes.data());
}
#endif

// What one zeCommandListAppendLaunchKernel captured: real Level Zero takes
// the arguments at append time, and the engine sets new arguments on the same
// kernel for the next launch before the list is submitted.
struct LaunchSnapshot
{
  KernelObject* kernel = nullptr;
  std::map<uint32_t, KernelArgument> args;
  uint32_t group_size[3] = {1, 1, 1};
  ze_group_count_t groups{};
  std::string line; // the launch log line, without the execution result
};

ze_result_t
execute_launch(const LaunchSnapshot& launch)
{
#if PREWARM_ZE_TEST_WITH_OPENCL
  std::scoped_lock lock(g_execute_mutex);
  auto failed = [&](const std::string& call, cl_int code, const std::string& why) {
    log_line(launch.line + " executed=no error=" +
             in_quotes(call + ": " + cl_error_name(code) + (why.empty() ? "" : " (" + why + ")")));
    return ze_result_for(code);
  };
  std::string why;
  for (const auto& [index, argument] : launch.args) {
    if (cl_int error = apply_argument(*launch.kernel, index, argument, why); error != CL_SUCCESS) {
      return failed("clSetKernelArg(" + launch.kernel->name + ", " + std::to_string(index) + ")", error, why);
    }
  }
  const size_t counts[3] = {launch.groups.groupCountX, launch.groups.groupCountY, launch.groups.groupCountZ};
  if (counts[0] == 0 || counts[1] == 0 || counts[2] == 0) {
    log_line(launch.line + " executed=yes"); // no work-items: nothing to run, as on a GPU
    return ZE_RESULT_SUCCESS;
  }
  size_t local[3], global[3];
  for (int d = 0; d < 3; ++d) {
    local[d] = launch.group_size[d];
    global[d] = counts[d] * local[d];
  }
  const auto& cl = opencl();
  if (cl_int error = clEnqueueNDRangeKernel(cl.queue, launch.kernel->kernel, 3, nullptr, global, local, 0, nullptr,
                                            nullptr);
      error != CL_SUCCESS) {
    return failed("clEnqueueNDRangeKernel(" + launch.kernel->name + ")", error, "");
  }
  if (cl_int error = clFinish(cl.queue); error != CL_SUCCESS) {
    return failed("clFinish after " + launch.kernel->name, error, "");
  }
  log_line(launch.line + " executed=yes");
  return ZE_RESULT_SUCCESS;
#else
  log_line(launch.line + " executed=no error=\"built without OpenCL\"");
  return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
#endif
}

// ---------------------------------------------------------------- binary inspection
uint16_t
read_u16(const std::string& b, size_t at)
{
  return static_cast<uint16_t>(static_cast<unsigned char>(b[at]) | (static_cast<unsigned char>(b[at + 1]) << 8));
}
uint32_t
read_u32(const std::string& b, size_t at)
{
  return static_cast<uint32_t>(read_u16(b, at)) | (static_cast<uint32_t>(read_u16(b, at + 2)) << 16);
}
uint64_t
read_u64(const std::string& b, size_t at)
{
  return static_cast<uint64_t>(read_u32(b, at)) | (static_cast<uint64_t>(read_u32(b, at + 4)) << 32);
}

// Checks what NEO checks first for a zebin: ELF64, e_machine EM_INTELGT (205),
// and the product family note. Returns the reason for a rejection, or the
// kernel names (from the ".text.<kernel>" sections).
std::optional<std::string>
inspect_zebin(const std::string& b, std::vector<std::string>& kernels)
{
  if (b.size() < 64 || b.compare(0, 4, "\x7f" "ELF") != 0 || b[4] != 2) {
    return "not an ELF64 file";
  }
  if (read_u16(b, 18) != 205) {
    return "ELF e_machine is " + std::to_string(read_u16(b, 18)) + ", not 205 (Intel GT): not a zebin";
  }
  const uint64_t shoff = read_u64(b, 0x28);
  const uint16_t shentsize = read_u16(b, 0x3a);
  const uint16_t shnum = read_u16(b, 0x3c);
  const uint16_t shstrndx = read_u16(b, 0x3e);
  if (shentsize < 64 || shstrndx >= shnum || shoff + uint64_t{shnum} * shentsize > b.size()) {
    return "section header table out of bounds";
  }
  auto section = [&](uint16_t i) { return shoff + uint64_t{i} * shentsize; };
  const uint64_t strtab = read_u64(b, section(shstrndx) + 0x18);
  std::optional<uint32_t> product_family;
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t name_at = strtab + read_u32(b, section(i));
    if (name_at >= b.size()) {
      return "section name out of bounds";
    }
    const std::string name(b.c_str() + name_at);
    const uint64_t offset = read_u64(b, section(i) + 0x18);
    const uint64_t size = read_u64(b, section(i) + 0x20);
    if (offset + size > b.size()) {
      return "section " + name + " out of bounds";
    }
    if (name.starts_with(".text.")) {
      kernels.push_back(name.substr(6));
    }
    if (name == ".note.intelgt.compat") {
      for (uint64_t at = offset; at + 12 <= offset + size;) {
        const uint32_t name_size = read_u32(b, at), desc_size = read_u32(b, at + 4), type = read_u32(b, at + 8);
        const uint64_t desc = at + 12 + ((name_size + 3) & ~3u);
        if (desc + desc_size > offset + size) {
          break;
        }
        if (type == 1 && desc_size >= 4) {
          product_family = read_u32(b, desc);
        }
        at = desc + ((desc_size + 3) & ~3u);
      }
    }
  }
  if (auto expected = expected_product_family()) {
    if (!product_family) {
      return "zebin has no product family note";
    }
    if (*product_family != *expected) {
      return "zebin is for product family " + std::to_string(*product_family) + ", this device is " +
             std::to_string(*expected);
    }
  }
  if (kernels.empty()) {
    return "zebin has no kernels";
  }
  return std::nullopt;
}

// SPIR-V: magic, then OpEntryPoint (opcode 15) instructions name the kernels.
std::optional<std::string>
inspect_spirv(const std::string& b, std::vector<std::string>& kernels)
{
  if (b.size() < 20 || b.size() % 4 != 0 || read_u32(b, 0) != 0x07230203u) {
    return "not SPIR-V (bad magic or size)";
  }
  for (size_t at = 20; at + 4 <= b.size();) {
    const uint32_t word = read_u32(b, at);
    const uint32_t count = word >> 16, opcode = word & 0xffff;
    if (count == 0 || at + count * 4 > b.size()) {
      return "SPIR-V instruction out of bounds";
    }
    if (opcode == 15 && count > 3) {
      kernels.emplace_back(b.c_str() + at + 12, ::strnlen(b.c_str() + at + 12, (count - 3) * 4));
    }
    at += count * 4;
  }
  if (kernels.empty()) {
    return "SPIR-V has no entry points";
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- executing a module
// The "\n" and "\\" escapes of aot_programs.hpp's key text, undone.
std::string
unescape(std::string_view value)
{
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) {
      out += value[i + 1] == 'n' ? '\n' : value[i + 1];
      ++i;
    } else {
      out += value[i];
    }
  }
  return out;
}

// The store file (<programs>/aot/*/<key><extension>) whose bytes are `bytes`.
std::optional<fs::path>
find_in_store(const fs::path& programs, const std::string& bytes, std::string_view extension)
{
  std::error_code ec;
  std::vector<fs::path> candidates;
  for (fs::directory_iterator target(programs / "aot", ec), end; !ec && target != end; target.increment(ec)) {
    std::error_code inner;
    for (fs::directory_iterator file(target->path(), inner); !inner && file != end; file.increment(inner)) {
      if (file->path().extension() == extension && file->is_regular_file(inner) &&
          file->file_size(inner) == bytes.size()) {
        candidates.push_back(file->path());
      }
    }
  }
  std::sort(candidates.begin(), candidates.end()); // the same answer on every run
  for (const auto& path : candidates) {
    if (read_whole_file(path) == bytes) {
      return path;
    }
  }
  return std::nullopt;
}

// The final source of a kernels/*.cl file, as the build embeds it
// (cmake/embed_files.cmake): a line `#include "NAME"` naming a file beside it
// becomes that file, its leading `//` comment lines left out. The .meta's
// source-sha256 is the digest of this text, not of the file.
std::string
expand_includes(const fs::path& path, std::string text)
{
  static constexpr std::string_view k_directive = "#include \"";
  for (std::size_t at = 0; (at = text.find(k_directive, at)) != std::string::npos;) {
    const auto name_end = text.find('"', at + k_directive.size());
    if (name_end == std::string::npos || name_end + 1 >= text.size() || text[name_end + 1] != '\n') {
      break;
    }
    const auto name = text.substr(at + k_directive.size(), name_end - at - k_directive.size());
    auto included = read_whole_file(path.parent_path() / name);
    if (!included) {
      at = name_end;
      continue;
    }
    std::size_t code = 0;
    while (included->compare(code, 2, "//") == 0) {
      const auto nl = included->find('\n', code);
      code = nl == std::string::npos ? included->size() : nl + 1;
    }
    text.replace(at, name_end + 2 - at, included->substr(code));
    at += included->size() - code;
  }
  return text;
}

struct SourceOfModule
{
  std::string name; // "gemm.cl"
  std::string text;
  std::string options;
};

// Where the module's bytes came from: the .meta beside them names the
// source's SHA-256 and the options; the source is looked up by that digest.
// Returns the reason on failure.
std::optional<std::string>
find_source(const ExecutionSettings& settings, const ModuleObject& module, SourceOfModule& found)
{
  const bool native = module.format == ZE_MODULE_FORMAT_NATIVE;
  const fs::path programs(settings.programs);
  auto binary = find_in_store(programs, module.bytes, native ? ".zebin" : ".spv");
  if (!binary) {
    return "test double cannot execute: module bytes not in " + (programs / "aot").string() + " (no " +
           (native ? std::string("*.zebin") : std::string("*.spv")) + " with these " +
           std::to_string(module.bytes.size()) + " bytes)";
  }
  const auto meta_path = fs::path(*binary).replace_extension(".meta");
  auto meta = read_whole_file(meta_path);
  if (!meta) {
    return "test double cannot execute: cannot read " + meta_path.string();
  }
  std::optional<std::string> source_sha256, options;
  for (std::string_view rest(*meta); !rest.empty();) {
    const auto nl = rest.find('\n');
    const auto line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    if (line.starts_with("source-sha256 ")) {
      source_sha256 = std::string(line.substr(14));
    } else if (line.starts_with("options ")) {
      options = unescape(line.substr(8));
    }
  }
  if (!source_sha256 || !options) {
    return "test double cannot execute: " + meta_path.string() + " has no source-sha256 or options line";
  }
  std::error_code ec;
  std::vector<fs::path> sources;
  for (fs::recursive_directory_iterator it(settings.sources, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code inner;
    if (it->is_regular_file(inner)) {
      sources.push_back(it->path());
    }
  }
  if (ec) {
    return "test double cannot execute: cannot list " + settings.sources + ": " + ec.message();
  }
  std::sort(sources.begin(), sources.end());
  for (const auto& path : sources) {
    auto text = read_whole_file(path);
    if (text) {
      text = expand_includes(path, std::move(*text));
    }
    if (text && sha256_hex(text->data(), text->size()) == *source_sha256) {
      found = {path.filename().string(), std::move(*text), std::move(*options)};
      return std::nullopt;
    }
  }
  return "test double cannot execute: no file in " + settings.sources + " has source-sha256 " + *source_sha256 +
         " (named by " + meta_path.string() + ")";
}

// Builds the module's OpenCL C on the OpenCL device; the reason on failure.
std::optional<std::string>
build_for_execution(const ExecutionSettings& settings, ModuleObject& module)
{
  SourceOfModule source;
  if (auto missing = find_source(settings, module, source)) {
    return missing;
  }
#if PREWARM_ZE_TEST_WITH_OPENCL
  const auto& cl = opencl();
  if (cl.device == nullptr) {
    return "test double cannot execute: " + cl.error;
  }
  const char* text = source.text.c_str();
  const size_t length = source.text.size();
  cl_int error = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(cl.context, 1, &text, &length, &error);
  if (error != CL_SUCCESS) {
    return "test double cannot execute: clCreateProgramWithSource(" + source.name + "): " + cl_error_name(error);
  }
  // The store's options verbatim, plus -cl-kernel-arg-info: PoCL answers
  // clGetKernelArgInfo only with it, and the argument kinds are what keep a
  // stray pointer from being handed to PoCL as a cl_mem (apply_argument).
  const std::string options = source.options + (source.options.empty() ? "" : " ") + "-cl-kernel-arg-info";
  error = clBuildProgram(program, 1, &cl.device, options.c_str(), nullptr, nullptr);
  if (error != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, cl.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string build_log(size, '\0');
    clGetProgramBuildInfo(program, cl.device, CL_PROGRAM_BUILD_LOG, size, build_log.data(), nullptr);
    while (!build_log.empty() && build_log.back() == '\0') {
      build_log.pop_back();
    }
    clReleaseProgram(program);
    return "test double cannot execute: OpenCL build of " + source.name + " [" + source.options + "] on " +
           cl.name + " failed: " + cl_error_name(error) + "\n" + build_log;
  }
  module.program = program;
  module.source_name = source.name;
  return std::nullopt;
#else
  return "test double cannot execute: built without OpenCL (" + source.name + " found)";
#endif
}

// ---------------------------------------------------------------- ze API
ze_result_t ZE_APICALL Init(ze_init_flags_t) { log_line("init"); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
DriverGet(uint32_t* count, ze_driver_handle_t* drivers)
{
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (drivers != nullptr && *count >= 1) drivers[0] = reinterpret_cast<ze_driver_handle_t>(&g_driver);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DriverGetApiVersion(ze_driver_handle_t, ze_api_version_t* v) { *v = ZE_API_VERSION_1_3; return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
DriverGetProperties(ze_driver_handle_t, ze_driver_properties_t* p)
{
  std::memset(&p->uuid, 0, sizeof p->uuid);
  std::memcpy(p->uuid.id, "prewarm-testdbl", 15);
  p->driverVersion = encoded_driver_version();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DriverGetIpcProperties(ze_driver_handle_t, ze_driver_ipc_properties_t* p) { p->flags = 0; return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL DriverGetExtensionProperties(ze_driver_handle_t, uint32_t* count, ze_driver_extension_properties_t*) { *count = 0; return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
DeviceGet(ze_driver_handle_t, uint32_t* count, ze_device_handle_t* devices)
{
  const uint32_t have = static_cast<uint32_t>(std::strtoul(env_or("PREWARM_ZE_TEST_DEVICE_COUNT", "1").c_str(), nullptr, 10)) > 0 ? 1 : 0;
  if (devices != nullptr && *count >= 1 && have == 1) devices[0] = reinterpret_cast<ze_device_handle_t>(&g_device);
  *count = have;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
DeviceGetProperties(ze_device_handle_t, ze_device_properties_t* p)
{
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0x8086;
  p->deviceId = device_id();
  p->flags = 0;
  p->subdeviceId = 0;
  p->coreClockRate = 1;
  p->maxMemAllocSize = uint64_t{1} << 30;
  p->maxHardwareContexts = 1;
  p->maxCommandQueuePriority = 0;
  p->numThreadsPerEU = 1;
  p->physicalEUSimdWidth = 8;
  p->numEUsPerSubslice = 1;
  p->numSubslicesPerSlice = 1;
  p->numSlices = 1;
  p->timerResolution = 1;
  p->timestampValidBits = 32;
  p->kernelTimestampValidBits = 32;
  std::memset(&p->uuid, 0, sizeof p->uuid);
  std::memcpy(p->uuid.id, "prewarm-testdbl", 15);
  std::snprintf(p->name, sizeof p->name, "%s", "prewarm test double (not a GPU)");
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
DeviceGetComputeProperties(ze_device_handle_t, ze_device_compute_properties_t* p)
{
  p->maxTotalGroupSize = 1024;
  p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
  p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 1u << 30;
  p->maxSharedLocalMemory = 64 * 1024;
  p->numSubGroupSizes = 1;
  p->subGroupSizes[0] = 16;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
DeviceGetModuleProperties(ze_device_handle_t, ze_device_module_properties_t* p)
{
  p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
  p->flags = 0;
  p->fp16flags = p->fp32flags = p->fp64flags = 0;
  p->maxArgumentsSize = 2048;
  p->printfBufferSize = 0;
  std::memset(&p->nativeKernelSupported, 0, sizeof p->nativeKernelSupported);
  constexpr ze_device_fp_flags_t k_basic_fp = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_INF_NAN;
  p->fp32flags = k_basic_fp;
#if PREWARM_ZE_TEST_WITH_OPENCL
  // Executing: what the kernels will really run on says what they may use.
  if (execution_settings() && opencl().device != nullptr) {
    const auto& cl = opencl();
    if (cl.has_extension("cl_khr_fp16")) {
      p->flags |= ZE_DEVICE_MODULE_FLAG_FP16;
      p->fp16flags = k_basic_fp;
    }
    if (cl.has_extension("cl_khr_fp64")) {
      p->flags |= ZE_DEVICE_MODULE_FLAG_FP64;
      p->fp64flags = ze_fp_flags(cl.fp64);
    }
    p->fp32flags = ze_fp_flags(cl.fp32);
    p->maxArgumentsSize = static_cast<uint32_t>(std::min<size_t>(cl.max_parameter_size, UINT32_MAX));
  }
#endif
  if (env_or("PREWARM_ZE_TEST_FP16", "") == "1") {
    p->flags |= ZE_DEVICE_MODULE_FLAG_FP16;
    p->fp16flags = k_basic_fp;
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
DeviceGetCommandQueueGroupProperties(ze_device_handle_t, uint32_t* count, ze_command_queue_group_properties_t* p)
{
  if (p != nullptr && *count >= 1) {
    p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p[0].maxMemoryFillPatternSize = 4;
    p[0].numQueues = 1;
  }
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL DeviceGetSubDevices(ze_device_handle_t, uint32_t* count, ze_device_handle_t*) { *count = 0; return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL DeviceGetMemoryProperties(ze_device_handle_t, uint32_t* count, ze_device_memory_properties_t*) { *count = 0; return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
ContextCreate(ze_driver_handle_t, const ze_context_desc_t*, ze_context_handle_t* out)
{
  *out = reinterpret_cast<ze_context_handle_t>(new ContextObject);
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL ContextDestroy(ze_context_handle_t h) { delete as<ze_context_handle_t, ContextObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
ModuleCreate(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t* desc, ze_module_handle_t* out,
             ze_module_build_log_handle_t* build_log)
{
  if (desc == nullptr || out == nullptr || (desc->inputSize > 0 && desc->pInputModule == nullptr)) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  auto module = std::make_unique<ModuleObject>();
  module->format = desc->format;
  module->bytes.assign(reinterpret_cast<const char*>(desc->pInputModule), desc->inputSize);
  const bool native = desc->format == ZE_MODULE_FORMAT_NATIVE;
  const auto execution = execution_settings();
  const std::string executing = execution ? " execute=yes" : "";
  // What a real driver checks comes first: a zebin for another device stays
  // rejected (with its NEO-like result) whether or not the double executes.
  auto rejection = native ? inspect_zebin(module->bytes, module->kernels) : inspect_spirv(module->bytes, module->kernels);
  ze_result_t failure = native ? ZE_RESULT_ERROR_INVALID_NATIVE_BINARY : ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  if (!rejection && execution) {
    rejection = build_for_execution(*execution, *module);
    failure = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }
  std::string line = std::string("module-create format=") + (native ? "native" : "spirv") +
                     " size=" + std::to_string(desc->inputSize) + " sha256=" +
                     sha256_hex(desc->pInputModule, desc->inputSize) +
                     " flags=" + in_quotes(desc->pBuildFlags != nullptr ? desc->pBuildFlags : "");
  if (build_log != nullptr) {
    *build_log = reinterpret_cast<ze_module_build_log_handle_t>(new BuildLogObject{rejection.value_or("")});
  }
  if (rejection) {
    log_line(line + " result=rejected reason=" + in_quotes(*rejection) + executing);
    *out = nullptr;
    return failure;
  }
  std::string names;
  for (const auto& k : module->kernels) {
    names += (names.empty() ? "" : ",") + k;
  }
  log_line(line + " result=accepted kernels=" + names + executing +
           (execution ? " source=" + in_quotes(module->source_name) : std::string()));
  *out = reinterpret_cast<ze_module_handle_t>(module.release());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL ModuleDestroy(ze_module_handle_t h) { delete as<ze_module_handle_t, ModuleObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
ModuleGetNativeBinary(ze_module_handle_t h, size_t* size, uint8_t* data)
{
  auto* module = as<ze_module_handle_t, ModuleObject>(h);
  if (module->format != ZE_MODULE_FORMAT_NATIVE) {
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; // the double compiles nothing
  }
  if (data != nullptr) {
    std::memcpy(data, module->bytes.data(), std::min(*size, module->bytes.size()));
  }
  *size = module->bytes.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
ModuleGetKernelNames(ze_module_handle_t h, uint32_t* count, const char** names)
{
  auto* module = as<ze_module_handle_t, ModuleObject>(h);
  if (names != nullptr) {
    for (uint32_t i = 0; i < *count && i < module->kernels.size(); ++i) names[i] = module->kernels[i].c_str();
  }
  *count = static_cast<uint32_t>(module->kernels.size());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
ModuleBuildLogGetString(ze_module_build_log_handle_t h, size_t* size, char* text)
{
  auto* log = as<ze_module_build_log_handle_t, BuildLogObject>(h);
  if (text != nullptr && *size > 0) {
    const size_t n = std::min(*size - 1, log->text.size());
    std::memcpy(text, log->text.data(), n);
    text[n] = '\0';
  }
  *size = log->text.size() + 1;
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL ModuleBuildLogDestroy(ze_module_build_log_handle_t h) { delete as<ze_module_build_log_handle_t, BuildLogObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
KernelCreate(ze_module_handle_t h, const ze_kernel_desc_t* desc, ze_kernel_handle_t* out)
{
  auto* module = as<ze_module_handle_t, ModuleObject>(h);
  if (desc == nullptr || desc->pKernelName == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  bool found = false;
  for (const auto& k : module->kernels) found = found || k == desc->pKernelName;
  if (!found) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
  auto kernel = std::make_unique<KernelObject>();
  kernel->module = module;
  kernel->name = desc->pKernelName;
#if PREWARM_ZE_TEST_WITH_OPENCL
  if (module->program != nullptr) {
    cl_int error = CL_SUCCESS;
    kernel->kernel = clCreateKernel(module->program, desc->pKernelName, &error);
    if (error != CL_SUCCESS) {
      log_line(std::string("kernel-create name=") + desc->pKernelName + " error=" +
               in_quotes("clCreateKernel: " + cl_error_name(error)));
      return error == CL_INVALID_KERNEL_NAME ? ZE_RESULT_ERROR_INVALID_KERNEL_NAME : ze_result_for(error);
    }
    clGetKernelInfo(kernel->kernel, CL_KERNEL_NUM_ARGS, sizeof kernel->argument_count, &kernel->argument_count,
                    nullptr);
    for (cl_uint i = 0; i < kernel->argument_count; ++i) {
      cl_kernel_arg_address_qualifier qualifier = 0;
      const bool known = clGetKernelArgInfo(kernel->kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof qualifier,
                                            &qualifier, nullptr) == CL_SUCCESS;
      kernel->pointer_arguments.push_back(!known ? PointerArgument::unknown
                                          : qualifier == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
                                                qualifier == CL_KERNEL_ARG_ADDRESS_CONSTANT
                                            ? PointerArgument::yes
                                            : PointerArgument::no);
    }
  }
#endif
  log_line(std::string("kernel-create name=") + desc->pKernelName);
  *out = reinterpret_cast<ze_kernel_handle_t>(kernel.release());
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL KernelDestroy(ze_kernel_handle_t h) { delete as<ze_kernel_handle_t, KernelObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
KernelSetArgumentValue(ze_kernel_handle_t h, uint32_t index, size_t size, const void* value)
{
  auto* kernel = as<ze_kernel_handle_t, KernelObject>(h);
  KernelArgument argument{size, value == nullptr,
                          value != nullptr ? std::string(static_cast<const char*>(value), size) : std::string()};
#if PREWARM_ZE_TEST_WITH_OPENCL
  if (kernel->kernel != nullptr) {
    if (index >= kernel->argument_count) {
      log_line("set-argument kernel=" + kernel->name + " index=" + std::to_string(index) + " error=" +
               in_quotes("the kernel has " + std::to_string(kernel->argument_count) + " arguments"));
      return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    }
    // Checked now, as a driver does; set again from the launch's snapshot
    // when the launch executes.
    std::scoped_lock lock(g_execute_mutex);
    std::string why;
    if (cl_int error = apply_argument(*kernel, index, argument, why); error != CL_SUCCESS) {
      log_line("set-argument kernel=" + kernel->name + " index=" + std::to_string(index) + " size=" +
               std::to_string(size) + " error=" + in_quotes(cl_error_name(error) + (why.empty() ? "" : " (" + why + ")")));
      return error == CL_INVALID_ARG_SIZE ? ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE : ze_result_for(error);
    }
  }
#endif
  kernel->args[index] = std::move(argument);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
KernelSetGroupSize(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z)
{
  if (x == 0 || y == 0 || z == 0 || uint64_t{x} * y * z > 1024) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  auto* kernel = as<ze_kernel_handle_t, KernelObject>(h);
  kernel->group_size[0] = x; kernel->group_size[1] = y; kernel->group_size[2] = z;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
KernelSuggestGroupSize(ze_kernel_handle_t, uint32_t x, uint32_t y, uint32_t z, uint32_t* gx, uint32_t* gy, uint32_t* gz)
{
  auto pick = [](uint32_t n) { uint32_t g = 1; while (g < 16 && n % (g * 2) == 0) g *= 2; return g; };
  *gx = pick(x); *gy = pick(y); *gz = pick(z);
  return ZE_RESULT_SUCCESS;
}

ze_result_t
allocate(size_t size, size_t alignment, void** out)
{
  alignment = std::max(alignment, k_page);
  void* p = std::aligned_alloc(alignment, (std::max<size_t>(size, 1) + alignment - 1) / alignment * alignment);
  if (p == nullptr) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  std::scoped_lock lock(g_memory_mutex);
  g_allocations[p] = Allocation{size, nullptr};
  *out = p;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL MemAllocShared(ze_context_handle_t, const ze_device_mem_alloc_desc_t*, const ze_host_mem_alloc_desc_t*, size_t size, size_t alignment, ze_device_handle_t, void** out) { return allocate(size, alignment, out); }
ze_result_t ZE_APICALL MemAllocDevice(ze_context_handle_t, const ze_device_mem_alloc_desc_t*, size_t size, size_t alignment, ze_device_handle_t, void** out) { return allocate(size, alignment, out); }
ze_result_t ZE_APICALL MemAllocHost(ze_context_handle_t, const ze_host_mem_alloc_desc_t*, size_t size, size_t alignment, void** out) { return allocate(size, alignment, out); }

ze_result_t ZE_APICALL
MemFree(ze_context_handle_t, void* p)
{
  std::scoped_lock lock(g_memory_mutex);
  auto it = g_allocations.find(p);
  if (it == g_allocations.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
#if PREWARM_ZE_TEST_WITH_OPENCL
  if (it->second.memory != nullptr) clReleaseMemObject(it->second.memory);
#endif
  g_allocations.erase(it);
  std::free(p);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL CommandQueueCreate(ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t*, ze_command_queue_handle_t* out) { *out = reinterpret_cast<ze_command_queue_handle_t>(new QueueObject); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandQueueDestroy(ze_command_queue_handle_t h) { delete as<ze_command_queue_handle_t, QueueObject>(h); return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL
CommandQueueExecuteCommandLists(ze_command_queue_handle_t, uint32_t count, ze_command_list_handle_t* lists, ze_fence_handle_t fence)
{
  for (uint32_t i = 0; i < count; ++i) {
    for (auto& command : as<ze_command_list_handle_t, CommandListObject>(lists[i])->commands) {
      // A failed launch (logged with its OpenCL error) fails the submission;
      // the fence is not signaled.
      if (ze_result_t result = command(); result != ZE_RESULT_SUCCESS) return result;
    }
  }
  if (fence != nullptr) as<ze_fence_handle_t, FenceObject>(fence)->signaled = true;
  return ZE_RESULT_SUCCESS;
}
ze_result_t ZE_APICALL CommandQueueSynchronize(ze_command_queue_handle_t, uint64_t) { return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL CommandListCreate(ze_context_handle_t, ze_device_handle_t, const ze_command_list_desc_t*, ze_command_list_handle_t* out) { *out = reinterpret_cast<ze_command_list_handle_t>(new CommandListObject{false, {}}); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandListCreateImmediate(ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t*, ze_command_list_handle_t* out) { *out = reinterpret_cast<ze_command_list_handle_t>(new CommandListObject{true, {}}); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandListDestroy(ze_command_list_handle_t h) { delete as<ze_command_list_handle_t, CommandListObject>(h); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandListClose(ze_command_list_handle_t) { return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL CommandListReset(ze_command_list_handle_t h) { as<ze_command_list_handle_t, CommandListObject>(h)->commands.clear(); return ZE_RESULT_SUCCESS; }

ze_result_t
submit(CommandListObject* list, std::function<ze_result_t()> command)
{
  if (list->immediate) {
    return command();
  }
  list->commands.push_back(std::move(command));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL
CommandListAppendLaunchKernel(ze_command_list_handle_t h, ze_kernel_handle_t k, const ze_group_count_t* groups, ze_event_handle_t, uint32_t, ze_event_handle_t*)
{
  auto* list = as<ze_command_list_handle_t, CommandListObject>(h);
  auto* kernel = as<ze_kernel_handle_t, KernelObject>(k);
  if (groups == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::string line = "launch kernel=" + kernel->name + " groups=" + std::to_string(groups->groupCountX) + "," +
                     std::to_string(groups->groupCountY) + "," + std::to_string(groups->groupCountZ) +
                     " group-size=" + std::to_string(kernel->group_size[0]) + "," +
                     std::to_string(kernel->group_size[1]) + "," + std::to_string(kernel->group_size[2]) +
                     " args=" + std::to_string(kernel->args.size()) + " list=" + (list->immediate ? "immediate" : "regular");
  if (kernel->kernel == nullptr) {
    // Not executing: the launch is recorded, never run.
    return submit(list, [line] { log_line(line); return ZE_RESULT_SUCCESS; });
  }
  LaunchSnapshot launch;
  launch.kernel = kernel;
  launch.args = kernel->args;
  std::copy(std::begin(kernel->group_size), std::end(kernel->group_size), launch.group_size);
  launch.groups = *groups;
  launch.line = std::move(line);
  return submit(list, [launch = std::move(launch)] { return execute_launch(launch); });
}

ze_result_t ZE_APICALL
CommandListAppendMemoryCopy(ze_command_list_handle_t h, void* dst, const void* src, size_t size, ze_event_handle_t, uint32_t, ze_event_handle_t*)
{
  // A plain memcpy also when executing: the OpenCL buffers are
  // CL_MEM_USE_HOST_PTR over this same memory, and PoCL's CPU device works on
  // that memory directly (each launch ends with clFinish), so host and
  // "device" never hold two copies that would need a transfer.
  return submit(as<ze_command_list_handle_t, CommandListObject>(h), [dst, src, size] {
    std::memmove(dst, src, size);
    log_line("copy bytes=" + std::to_string(size));
    return ZE_RESULT_SUCCESS;
  });
}
ze_result_t ZE_APICALL CommandListAppendBarrier(ze_command_list_handle_t, ze_event_handle_t, uint32_t, ze_event_handle_t*) { return ZE_RESULT_SUCCESS; }

ze_result_t ZE_APICALL FenceCreate(ze_command_queue_handle_t, const ze_fence_desc_t*, ze_fence_handle_t* out) { *out = reinterpret_cast<ze_fence_handle_t>(new FenceObject); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL FenceDestroy(ze_fence_handle_t h) { delete as<ze_fence_handle_t, FenceObject>(h); return ZE_RESULT_SUCCESS; }
ze_result_t ZE_APICALL FenceHostSynchronize(ze_fence_handle_t h, uint64_t) { return as<ze_fence_handle_t, FenceObject>(h)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY; }
ze_result_t ZE_APICALL FenceQueryStatus(ze_fence_handle_t h) { return as<ze_fence_handle_t, FenceObject>(h)->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY; }
ze_result_t ZE_APICALL FenceReset(ze_fence_handle_t h) { as<ze_fence_handle_t, FenceObject>(h)->signaled = false; return ZE_RESULT_SUCCESS; }

bool
version_ok(ze_api_version_t version)
{
  return ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT) == ZE_MAJOR_VERSION(version);
}

} // namespace

// ---------------------------------------------------------------- exported DDI getters
#define PW_TABLE_BEGIN(getter, table_type)                                     \
  extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, table_type* table) \
  {                                                                            \
    if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;         \
    if (!version_ok(version)) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;      \
    *table = {};
#define PW_TABLE_END                                                           \
    return ZE_RESULT_SUCCESS;                                                  \
  }
#define PW_EMPTY_TABLE(getter, table_type) PW_TABLE_BEGIN(getter, table_type) PW_TABLE_END

PW_TABLE_BEGIN(zeGetGlobalProcAddrTable, ze_global_dditable_t)
  table->pfnInit = Init;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetDriverProcAddrTable, ze_driver_dditable_t)
  table->pfnGet = DriverGet;
  table->pfnGetApiVersion = DriverGetApiVersion;
  table->pfnGetProperties = DriverGetProperties;
  table->pfnGetIpcProperties = DriverGetIpcProperties;
  table->pfnGetExtensionProperties = DriverGetExtensionProperties;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetDeviceProcAddrTable, ze_device_dditable_t)
  table->pfnGet = DeviceGet;
  table->pfnGetProperties = DeviceGetProperties;
  table->pfnGetComputeProperties = DeviceGetComputeProperties;
  table->pfnGetModuleProperties = DeviceGetModuleProperties;
  table->pfnGetCommandQueueGroupProperties = DeviceGetCommandQueueGroupProperties;
  table->pfnGetSubDevices = DeviceGetSubDevices;
  table->pfnGetMemoryProperties = DeviceGetMemoryProperties;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetContextProcAddrTable, ze_context_dditable_t)
  table->pfnCreate = ContextCreate;
  table->pfnDestroy = ContextDestroy;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetModuleProcAddrTable, ze_module_dditable_t)
  table->pfnCreate = ModuleCreate;
  table->pfnDestroy = ModuleDestroy;
  table->pfnGetNativeBinary = ModuleGetNativeBinary;
  table->pfnGetKernelNames = ModuleGetKernelNames;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
  table->pfnGetString = ModuleBuildLogGetString;
  table->pfnDestroy = ModuleBuildLogDestroy;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
  table->pfnCreate = KernelCreate;
  table->pfnDestroy = KernelDestroy;
  table->pfnSetArgumentValue = KernelSetArgumentValue;
  table->pfnSetGroupSize = KernelSetGroupSize;
  table->pfnSuggestGroupSize = KernelSuggestGroupSize;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetMemProcAddrTable, ze_mem_dditable_t)
  table->pfnAllocShared = MemAllocShared;
  table->pfnAllocDevice = MemAllocDevice;
  table->pfnAllocHost = MemAllocHost;
  table->pfnFree = MemFree;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
  table->pfnCreate = CommandQueueCreate;
  table->pfnDestroy = CommandQueueDestroy;
  table->pfnExecuteCommandLists = CommandQueueExecuteCommandLists;
  table->pfnSynchronize = CommandQueueSynchronize;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetCommandListProcAddrTable, ze_command_list_dditable_t)
  table->pfnCreate = CommandListCreate;
  table->pfnCreateImmediate = CommandListCreateImmediate;
  table->pfnDestroy = CommandListDestroy;
  table->pfnClose = CommandListClose;
  table->pfnReset = CommandListReset;
  table->pfnAppendLaunchKernel = CommandListAppendLaunchKernel;
  table->pfnAppendMemoryCopy = CommandListAppendMemoryCopy;
  table->pfnAppendBarrier = CommandListAppendBarrier;
PW_TABLE_END
PW_TABLE_BEGIN(zeGetFenceProcAddrTable, ze_fence_dditable_t)
  table->pfnCreate = FenceCreate;
  table->pfnDestroy = FenceDestroy;
  table->pfnHostSynchronize = FenceHostSynchronize;
  table->pfnQueryStatus = FenceQueryStatus;
  table->pfnReset = FenceReset;
PW_TABLE_END

PW_EMPTY_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
PW_EMPTY_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
PW_EMPTY_TABLE(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)
PW_EMPTY_TABLE(zeGetEventProcAddrTable, ze_event_dditable_t)
PW_EMPTY_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
PW_EMPTY_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
PW_EMPTY_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
PW_EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
PW_EMPTY_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
PW_EMPTY_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
PW_EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
PW_EMPTY_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)

PW_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
PW_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
PW_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)
PW_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
PW_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
PW_EMPTY_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
PW_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
PW_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
PW_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
PW_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
PW_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
PW_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
PW_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)

PW_EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
PW_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
PW_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
PW_EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
PW_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
PW_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
PW_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
PW_EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
PW_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
PW_EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
PW_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
PW_EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
PW_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
PW_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
PW_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
PW_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
PW_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
