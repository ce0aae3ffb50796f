// SPDX-License-Identifier: Apache-2.0
// The OpenCL layer's two entry points (CL/cl_layer.h, API version 100), as
// Debian's ocl-icd 2.3.1 loads them from OPENCL_LAYERS and the Khronos loader
// from OPENCL_LAYERS or a .lay file. The loader asks for our table once; a
// NULL entry means "not intercepted": the loader calls the layer below.
#include "layer/cl_query.hpp"
#include "layer/layer_calls.hpp"
#include "layer/layer_log.hpp"
#include "layer/layer_settings.hpp"
#include "layer/next_dispatch.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace prewarm::layer {
namespace {

constexpr std::string_view k_layer_name = "prewarm program layer (record/serve OpenCL program binaries)";

cl_icd_dispatch
intercepting_table()
{
  cl_icd_dispatch table{};
  table.clCreateProgramWithSource = create_program_with_source;
  table.clCreateProgramWithIL = create_program_with_il;
  table.clSetProgramSpecializationConstant = set_program_specialization_constant;
  table.clBuildProgram = build_program;
  table.clCompileProgram = compile_program;
  table.clLinkProgram = link_program;
  table.clRetainProgram = retain_program;
  table.clReleaseProgram = release_program;
  table.clReleaseContext = release_context;
  table.clGetProgramInfo = get_program_info;
  table.clGetProgramBuildInfo = get_program_build_info;
  table.clCreateKernel = create_kernel;
  table.clCreateKernelsInProgram = create_kernels_in_program;
  table.clCloneKernel = clone_kernel;
  table.clReleaseKernel = release_kernel;
  table.clGetKernelInfo = get_kernel_info;
  table.clGetExtensionFunctionAddress = get_extension_function_address;
  table.clGetExtensionFunctionAddressForPlatform = get_extension_function_address_for_platform;
  return table;
}

} // namespace
} // namespace prewarm::layer

extern "C" {

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void* param_value, size_t* param_value_size_ret)
{
  using namespace prewarm::layer;
  const void* data = nullptr;
  std::size_t size = 0;
  static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  switch (param_name) {
    case CL_LAYER_API_VERSION:
      data = &version;
      size = sizeof version;
      break;
    case CL_LAYER_NAME:
      data = k_layer_name.data();
      size = k_layer_name.size() + 1; // with its NUL (a string literal's view)
      break;
    default:
      return CL_INVALID_VALUE;
  }
  return answer_query(data, size, param_value_size, param_value, param_value_size_ret);
}

__attribute__((visibility("default"))) CL_API_ENTRY cl_int CL_API_CALL
clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch, cl_uint* num_entries_ret,
            const cl_icd_dispatch** layer_dispatch_ret)
{
  using namespace prewarm::layer;
  constexpr cl_uint k_entries = sizeof(cl_icd_dispatch) / sizeof(void*);
  if (target_dispatch == nullptr || num_entries_ret == nullptr || layer_dispatch_ret == nullptr) {
    return CL_INVALID_VALUE;
  }
  // A loader whose table ends before the last function the layer calls
  // (clSetProgramSpecializationConstant, OpenCL 2.2) would be read past its
  // end: pass everything through instead.
  constexpr cl_uint k_needed = offsetof(cl_icd_dispatch, clSetProgramSpecializationConstant) / sizeof(void*) + 1;
  static const cl_icd_dispatch passing{};
  // Loaded twice into one chain (the Khronos loader reads the installed .lay
  // file and OPENCL_LAYERS, and both name this library, which dlopen maps
  // once): the outer instance would be handed the inner one's table as its
  // next and call itself. The second initialisation passes through.
  static std::atomic<bool> initialised{false};
  if (initialised.exchange(true)) {
    *layer_dispatch_ret = &passing;
    *num_entries_ret = k_entries;
    return CL_SUCCESS;
  }
  static cl_icd_dispatch next_copy{};
  std::memcpy(&next_copy, target_dispatch, std::min<std::size_t>(num_entries, k_entries) * sizeof(void*));
  set_next(&next_copy);
  static const cl_icd_dispatch intercepting = intercepting_table();
  const bool active = settings().mode != LayerMode::off && num_entries >= k_needed;
  if (settings().mode != LayerMode::off && !active) {
    operator_line("the OpenCL loader's dispatch table is older than OpenCL 2.2: passing every call through");
  }
  if (active) {
    start_layer();
  }
  *layer_dispatch_ret = active ? &intercepting : &passing;
  *num_entries_ret = k_entries;
  return CL_SUCCESS;
}

} // extern "C"
