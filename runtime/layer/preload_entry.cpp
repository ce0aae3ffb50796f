// SPDX-License-Identifier: Apache-2.0
// The same layer as an LD_PRELOAD library, for OpenCL loaders without layer
// support (ocl-icd < 2.2.14, Khronos < 2020.12). It exports the intercepted
// functions under the API's names and calls the next definition in the
// search order (the loader's) through dlsym(RTLD_NEXT). An application that
// dlopen()s libOpenCL and looks its functions up on that handle (hashcat)
// never reaches these: use the layer build wherever the loader has layers.
// Nothing runs at load time (no constructors: static initialisation order in
// a preloaded library bit the prototype); the table is filled at the first
// intercepted call.
#include "layer/layer_calls.hpp"
#include "layer/layer_settings.hpp"
#include "layer/next_dispatch.hpp"

#include <dlfcn.h>
#include <mutex>

namespace prewarm::layer {
namespace {

template<typename Function>
void
resolve(Function& slot, const char* name)
{
  slot = reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

void
ensure_started()
{
  static std::once_flag once;
  std::call_once(once, [] {
    // Leaked on purpose: calls may come from static destructors.
    auto* table = new cl_icd_dispatch{};
    resolve(table->clGetPlatformInfo, "clGetPlatformInfo");
    resolve(table->clGetDeviceInfo, "clGetDeviceInfo");
    resolve(table->clGetContextInfo, "clGetContextInfo");
    resolve(table->clCreateProgramWithSource, "clCreateProgramWithSource");
    resolve(table->clCreateProgramWithIL, "clCreateProgramWithIL");
    resolve(table->clCreateProgramWithBinary, "clCreateProgramWithBinary");
    resolve(table->clSetProgramSpecializationConstant, "clSetProgramSpecializationConstant");
    resolve(table->clBuildProgram, "clBuildProgram");
    resolve(table->clCompileProgram, "clCompileProgram");
    resolve(table->clLinkProgram, "clLinkProgram");
    resolve(table->clRetainProgram, "clRetainProgram");
    resolve(table->clReleaseProgram, "clReleaseProgram");
    resolve(table->clReleaseContext, "clReleaseContext");
    resolve(table->clGetProgramInfo, "clGetProgramInfo");
    resolve(table->clGetProgramBuildInfo, "clGetProgramBuildInfo");
    resolve(table->clCreateKernel, "clCreateKernel");
    resolve(table->clCreateKernelsInProgram, "clCreateKernelsInProgram");
    resolve(table->clCloneKernel, "clCloneKernel");
    resolve(table->clReleaseKernel, "clReleaseKernel");
    resolve(table->clGetKernelInfo, "clGetKernelInfo");
    resolve(table->clGetExtensionFunctionAddress, "clGetExtensionFunctionAddress");
    resolve(table->clGetExtensionFunctionAddressForPlatform, "clGetExtensionFunctionAddressForPlatform");
    set_next(table);
    start_layer();
  });
}

} // namespace
} // namespace prewarm::layer

#define PREWARM_EXPORT extern "C" __attribute__((visibility("default"))) CL_API_ENTRY

using namespace prewarm::layer;

PREWARM_EXPORT cl_program CL_API_CALL
clCreateProgramWithSource(cl_context c, cl_uint n, const char** s, const size_t* l, cl_int* e)
{
  ensure_started();
  return create_program_with_source(c, n, s, l, e);
}

PREWARM_EXPORT cl_program CL_API_CALL
clCreateProgramWithIL(cl_context c, const void* il, size_t n, cl_int* e)
{
  ensure_started();
  return create_program_with_il(c, il, n, e);
}

PREWARM_EXPORT cl_int CL_API_CALL
clSetProgramSpecializationConstant(cl_program p, cl_uint id, size_t n, const void* v)
{
  ensure_started();
  return set_program_specialization_constant(p, id, n, v);
}

PREWARM_EXPORT cl_int CL_API_CALL
clBuildProgram(cl_program p, cl_uint n, const cl_device_id* d, const char* o, void(CL_CALLBACK* f)(cl_program, void*), void* u)
{
  ensure_started();
  return build_program(p, n, d, o, f, u);
}

PREWARM_EXPORT cl_int CL_API_CALL
clCompileProgram(cl_program p, cl_uint n, const cl_device_id* d, const char* o, cl_uint nh, const cl_program* h, const char** hn,
                 void(CL_CALLBACK* f)(cl_program, void*), void* u)
{
  ensure_started();
  return compile_program(p, n, d, o, nh, h, hn, f, u);
}

PREWARM_EXPORT cl_program CL_API_CALL
clLinkProgram(cl_context c, cl_uint n, const cl_device_id* d, const char* o, cl_uint ni, const cl_program* i,
              void(CL_CALLBACK* f)(cl_program, void*), void* u, cl_int* e)
{
  ensure_started();
  return link_program(c, n, d, o, ni, i, f, u, e);
}

PREWARM_EXPORT cl_int CL_API_CALL
clRetainProgram(cl_program p)
{
  ensure_started();
  return retain_program(p);
}

PREWARM_EXPORT cl_int CL_API_CALL
clReleaseProgram(cl_program p)
{
  ensure_started();
  return release_program(p);
}

PREWARM_EXPORT cl_int CL_API_CALL
clReleaseContext(cl_context c)
{
  ensure_started();
  return release_context(c);
}

PREWARM_EXPORT cl_int CL_API_CALL
clGetProgramInfo(cl_program p, cl_program_info w, size_t n, void* v, size_t* r)
{
  ensure_started();
  return get_program_info(p, w, n, v, r);
}

PREWARM_EXPORT cl_int CL_API_CALL
clGetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info w, size_t n, void* v, size_t* r)
{
  ensure_started();
  return get_program_build_info(p, d, w, n, v, r);
}

PREWARM_EXPORT cl_kernel CL_API_CALL
clCreateKernel(cl_program p, const char* name, cl_int* e)
{
  ensure_started();
  return create_kernel(p, name, e);
}

PREWARM_EXPORT cl_int CL_API_CALL
clCreateKernelsInProgram(cl_program p, cl_uint n, cl_kernel* k, cl_uint* r)
{
  ensure_started();
  return create_kernels_in_program(p, n, k, r);
}

PREWARM_EXPORT cl_kernel CL_API_CALL
clCloneKernel(cl_kernel k, cl_int* e)
{
  ensure_started();
  return clone_kernel(k, e);
}

PREWARM_EXPORT cl_int CL_API_CALL
clReleaseKernel(cl_kernel k)
{
  ensure_started();
  return release_kernel(k);
}

PREWARM_EXPORT cl_int CL_API_CALL
clGetKernelInfo(cl_kernel k, cl_kernel_info w, size_t n, void* v, size_t* r)
{
  ensure_started();
  return get_kernel_info(k, w, n, v, r);
}

PREWARM_EXPORT void* CL_API_CALL
clGetExtensionFunctionAddress(const char* name)
{
  ensure_started();
  return get_extension_function_address(name);
}

PREWARM_EXPORT void* CL_API_CALL
clGetExtensionFunctionAddressForPlatform(cl_platform_id p, const char* name)
{
  ensure_started();
  return get_extension_function_address_for_platform(p, name);
}
