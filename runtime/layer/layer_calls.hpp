// SPDX-License-Identifier: Apache-2.0
// The OpenCL functions the layer intercepts, with the API's signatures. The
// layer build puts them in its dispatch table (layer_entry.cpp); the
// LD_PRELOAD build exports them under the API's names (preload_entry.cpp).
// Every other function is not touched.
#pragma once

#include "layer/cl_layer_api.hpp"

namespace prewarm::layer {

// Called once before the first intercepted call (registers the exit flag).
void start_layer();

cl_program CL_API_CALL create_program_with_source(cl_context, cl_uint, const char**, const size_t*, cl_int*);
cl_program CL_API_CALL create_program_with_il(cl_context, const void*, size_t, cl_int*);
cl_int CL_API_CALL set_program_specialization_constant(cl_program, cl_uint, size_t, const void*);
cl_int CL_API_CALL build_program(cl_program, cl_uint, const cl_device_id*, const char*,
                                 void(CL_CALLBACK*)(cl_program, void*), void*);
cl_int CL_API_CALL compile_program(cl_program, cl_uint, const cl_device_id*, const char*, cl_uint,
                                   const cl_program*, const char**, void(CL_CALLBACK*)(cl_program, void*), void*);
cl_program CL_API_CALL link_program(cl_context, cl_uint, const cl_device_id*, const char*, cl_uint,
                                    const cl_program*, void(CL_CALLBACK*)(cl_program, void*), void*, cl_int*);
cl_int CL_API_CALL retain_program(cl_program);
cl_int CL_API_CALL release_program(cl_program);
cl_int CL_API_CALL release_context(cl_context);
cl_int CL_API_CALL get_program_info(cl_program, cl_program_info, size_t, void*, size_t*);
cl_int CL_API_CALL get_program_build_info(cl_program, cl_device_id, cl_program_build_info, size_t, void*, size_t*);
cl_kernel CL_API_CALL create_kernel(cl_program, const char*, cl_int*);
cl_int CL_API_CALL create_kernels_in_program(cl_program, cl_uint, cl_kernel*, cl_uint*);
cl_kernel CL_API_CALL clone_kernel(cl_kernel, cl_int*);
cl_int CL_API_CALL release_kernel(cl_kernel);
cl_int CL_API_CALL get_kernel_info(cl_kernel, cl_kernel_info, size_t, void*, size_t*);
void* CL_API_CALL get_extension_function_address(const char*);
void* CL_API_CALL get_extension_function_address_for_platform(cl_platform_id, const char*);

} // namespace prewarm::layer
