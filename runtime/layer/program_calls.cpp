// SPDX-License-Identifier: Apache-2.0
// Program creation, release and queries, kernels, and extension lookups, as
// the layer tracks them (program_table.hpp); builds, compiles and links are
// in program_builds.cpp, capture in program_capture.hpp, serving in
// program_serving.hpp.
#include "layer/layer_calls.hpp"

#include "base/digest.hpp"
#include "layer/cl_query.hpp"
#include "layer/layer_log.hpp"
#include "layer/layer_settings.hpp"
#include "layer/next_dispatch.hpp"
#include "layer/program_capture.hpp"
#include "layer/program_queries.hpp"
#include "layer/program_serving.hpp"
#include "layer/program_table.hpp"
#include "store/program_record.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace prewarm::layer {
namespace {

// Drops a reference the layer took for a link input, a header or a kernel
// of a served program. Tracking ends with the application's own last
// release (ProgramTable::release), never here.
void
release_held(cl_program program)
{
  next().clReleaseProgram(program);
}

void
track_created(cl_program program, cl_context context, store::SourceKind kind, std::string payload)
{
  if (program == nullptr || settings().mode == LayerMode::off) {
    return;
  }
  TrackedProgram tracked;
  tracked.context = context;
  tracked.kind = kind;
  tracked.payload_sha256 = sha256_hex(payload);
  tracked.payload = std::move(payload);
  ProgramTable::instance().put(program, std::move(tracked));
}

// clCreateProgramWithILKHR as the ICD returned it (extension lookups).
std::atomic<clCreateProgramWithILKHR_fn> g_create_with_il_khr{nullptr};

cl_program CL_API_CALL
create_program_with_il_khr(cl_context context, const void* il, size_t length, cl_int* errcode_ret)
{
  const auto real = g_create_with_il_khr.load();
  if (real == nullptr) {
    if (errcode_ret != nullptr) {
      *errcode_ret = CL_INVALID_OPERATION;
    }
    return nullptr;
  }
  cl_program program = real(context, il, length, errcode_ret);
  if (il != nullptr) {
    track_created(program, context, store::SourceKind::il, std::string(static_cast<const char*>(il), length));
  }
  return program;
}

void*
wrap_extension(const char* name, void* function)
{
  if (function == nullptr || name == nullptr || settings().mode == LayerMode::off) {
    return function;
  }
  if (std::strcmp(name, "clCreateProgramWithILKHR") == 0) {
    g_create_with_il_khr.store(reinterpret_cast<clCreateProgramWithILKHR_fn>(function));
    return reinterpret_cast<void*>(&create_program_with_il_khr);
  }
  // An extension that takes a cl_program would see the application's unbuilt
  // handle instead of the shadow; none of the drivers here has one (PoCL
  // 3.1 exports none), so it is named for the operator rather than wrapped.
  operator_line(fmt::format("extension function {} passed through unwrapped", name));
  return function;
}

} // namespace

void
start_layer()
{
  static std::once_flag once;
  std::call_once(once, [] {
    // Registered at the first OpenCL call, which for most loaders comes
    // after the ICDs (and PoCL's LLVM) were loaded, so it runs before their
    // teardown: from then on no release is captured. The capture at exit
    // (program_capture.hpp) runs earlier still, first thing in exit().
    std::atexit(mark_exiting);
    (void)settings();
    start_exit_watch();
  });
}

cl_program CL_API_CALL
create_program_with_source(cl_context context, cl_uint count, const char** strings, const size_t* lengths, cl_int* errcode_ret)
{
  cl_program program = next().clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  if (program != nullptr && strings != nullptr) {
    std::string source;
    for (cl_uint i = 0; i < count; ++i) {
      if (strings[i] == nullptr) {
        continue;
      }
      source += lengths != nullptr && lengths[i] != 0 ? std::string_view(strings[i], lengths[i]) : std::string_view(strings[i]);
    }
    track_created(program, context, store::SourceKind::source, std::move(source));
  }
  return program;
}

cl_program CL_API_CALL
create_program_with_il(cl_context context, const void* il, size_t length, cl_int* errcode_ret)
{
  cl_program program = next().clCreateProgramWithIL(context, il, length, errcode_ret);
  if (program != nullptr && il != nullptr) {
    track_created(program, context, store::SourceKind::il, std::string(static_cast<const char*>(il), length));
  }
  return program;
}

cl_int CL_API_CALL
set_program_specialization_constant(cl_program program, cl_uint id, size_t size, const void* value)
{
  const auto status = next().clSetProgramSpecializationConstant(program, id, size, value);
  if (status == CL_SUCCESS && value != nullptr) {
    ProgramTable::instance().update(program, [&](TrackedProgram& t) {
      std::erase_if(t.spec_constants, [id](const SpecConstant& c) { return c.id == id; });
      t.spec_constants.push_back({id, std::string(static_cast<const char*>(value), size)});
    });
  }
  return status;
}
cl_int CL_API_CALL
retain_program(cl_program program)
{
  const auto status = next().clRetainProgram(program);
  if (status == CL_SUCCESS) {
    ProgramTable::instance().retain(program);
  }
  return status;
}

cl_int CL_API_CALL
release_program(cl_program program)
{
  // The application's last reference (its kernels may still hold the
  // program): capture it while the layer's reference keeps it valid, drop
  // what the layer held for it, then that reference. Counted by the
  // application's calls, not read from the driver's reference count, which
  // another thread's driver work may raise at that moment.
  auto tracked = program != nullptr ? ProgramTable::instance().release(program) : std::nullopt;
  const auto status = next().clReleaseProgram(program);
  if (tracked) {
    if (tracked->record_at_release && settings().records() && !exiting()) {
      write_records(program, *tracked, k_at_release);
    }
    if (tracked->shadow != nullptr) {
      next().clReleaseProgram(tracked->shadow);
    }
    for (const auto input : tracked->link_inputs) {
      release_held(input);
    }
    if (tracked->virtual_compile) {
      for (const auto& header : tracked->virtual_compile->headers) {
        next().clReleaseProgram(header.program);
      }
    }
    next().clReleaseProgram(program); // the layer's own (ProgramTable::put)
  }
  return status;
}

cl_int CL_API_CALL
release_context(cl_context context)
{
  if (settings().records() && !exiting()) {
    for (const auto& [program, tracked] : ProgramTable::instance().recorded_in(context)) {
      write_records(program, tracked, k_at_context_release);
    }
  }
  return next().clReleaseContext(context);
}

cl_int CL_API_CALL
get_program_info(cl_program program, cl_program_info name, size_t size, void* value, size_t* size_ret)
{
  switch (name) {
    case CL_PROGRAM_REFERENCE_COUNT: {
      // Less the layer's own reference: the count the application would see without it.
      cl_uint count = 0;
      const auto status = next().clGetProgramInfo(program, name, sizeof count, &count, nullptr);
      if (status != CL_SUCCESS) {
        return status;
      }
      if (count > 1 && ProgramTable::instance().tracks(program)) {
        --count;
      }
      return answer_query(&count, sizeof count, size, value, size_ret);
    }
    case CL_PROGRAM_CONTEXT:
    case CL_PROGRAM_SOURCE:
    case CL_PROGRAM_IL:
      return next().clGetProgramInfo(program, name, size, value, size_ret); // the application's own
    default:
      break;
  }
  if (ProgramTable::instance().is_virtual(program)) {
    materialise(program);
  }
  return next().clGetProgramInfo(ProgramTable::instance().shadow_of(program), name, size, value, size_ret);
}

cl_int CL_API_CALL
get_program_build_info(cl_program program, cl_device_id device, cl_program_build_info name, size_t size, void* value,
                       size_t* size_ret)
{
  if (auto tracked = ProgramTable::instance().find(program); tracked && tracked->virtual_compile) {
    const auto answer = [&](const void* data, std::size_t data_size) { return answer_query(data, data_size, size, value, size_ret); };
    switch (name) {
      case CL_PROGRAM_BUILD_STATUS: {
        const cl_build_status status = CL_BUILD_SUCCESS;
        return answer(&status, sizeof status);
      }
      case CL_PROGRAM_BINARY_TYPE: {
        const cl_program_binary_type type = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
        return answer(&type, sizeof type);
      }
      case CL_PROGRAM_BUILD_LOG:
        return answer(tracked->virtual_compile->log.c_str(), tracked->virtual_compile->log.size() + 1);
      case CL_PROGRAM_BUILD_OPTIONS:
        return answer(tracked->virtual_compile->options.c_str(), tracked->virtual_compile->options.size() + 1);
      default:
        materialise(program);
        break;
    }
  }
  return next().clGetProgramBuildInfo(ProgramTable::instance().shadow_of(program), device, name, size, value, size_ret);
}

cl_kernel CL_API_CALL
create_kernel(cl_program program, const char* name, cl_int* errcode_ret)
{
  const auto shadow = ProgramTable::instance().shadow_of(program);
  cl_kernel kernel = next().clCreateKernel(shadow, name, errcode_ret);
  if (kernel != nullptr && shadow != program) {
    next().clRetainProgram(program); // as the kernel would on an unshadowed program
    ProgramTable::instance().put_kernel(kernel, program);
  }
  return kernel;
}

cl_int CL_API_CALL
create_kernels_in_program(cl_program program, cl_uint num_kernels, cl_kernel* kernels, cl_uint* num_kernels_ret)
{
  const auto shadow = ProgramTable::instance().shadow_of(program);
  cl_uint created = 0;
  const auto status = next().clCreateKernelsInProgram(shadow, num_kernels, kernels, &created);
  if (num_kernels_ret != nullptr) {
    *num_kernels_ret = created;
  }
  if (status == CL_SUCCESS && kernels != nullptr && shadow != program) {
    for (cl_uint i = 0; i < created; ++i) {
      next().clRetainProgram(program);
      ProgramTable::instance().put_kernel(kernels[i], program);
    }
  }
  return status;
}

cl_kernel CL_API_CALL
clone_kernel(cl_kernel source, cl_int* errcode_ret)
{
  cl_kernel kernel = next().clCloneKernel(source, errcode_ret);
  if (kernel != nullptr) {
    if (const auto program = ProgramTable::instance().kernel_program(source)) {
      next().clRetainProgram(program);
      ProgramTable::instance().put_kernel(kernel, program);
    }
  }
  return kernel;
}

cl_int CL_API_CALL
release_kernel(cl_kernel kernel)
{
  cl_uint count = 0;
  cl_program program = nullptr;
  if (next().clGetKernelInfo(kernel, CL_KERNEL_REFERENCE_COUNT, sizeof count, &count, nullptr) == CL_SUCCESS && count == 1) {
    program = ProgramTable::instance().take_kernel(kernel);
  }
  const auto status = next().clReleaseKernel(kernel);
  if (program != nullptr) {
    release_held(program); // the reference the kernel held (create_kernel)
  }
  return status;
}

cl_int CL_API_CALL
get_kernel_info(cl_kernel kernel, cl_kernel_info name, size_t size, void* value, size_t* size_ret)
{
  if (name == CL_KERNEL_PROGRAM) {
    if (const auto program = ProgramTable::instance().kernel_program(kernel)) {
      return answer_query(&program, sizeof program, size, value, size_ret);
    }
  }
  return next().clGetKernelInfo(kernel, name, size, value, size_ret);
}

void* CL_API_CALL
get_extension_function_address(const char* name)
{
  return wrap_extension(name, next().clGetExtensionFunctionAddress(name));
}

void* CL_API_CALL
get_extension_function_address_for_platform(cl_platform_id platform, const char* name)
{
  return wrap_extension(name, next().clGetExtensionFunctionAddressForPlatform(platform, name));
}

} // namespace prewarm::layer
