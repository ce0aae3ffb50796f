// SPDX-License-Identifier: Apache-2.0
// PW_CL_CHECK(call): run an OpenCL call; on failure return an Error that
// names the call and the status ("clBuildProgram(...) failed: CL_BUILD_PROGRAM_FAILURE (-11)").
#pragma once

#include "base/error.hpp"
#include "opencl/cl.hpp"

#include <string>
#include <string_view>

namespace prewarm::opencl {

// "CL_OUT_OF_RESOURCES"; "CL_UNKNOWN_ERROR" for codes outside the spec.
std::string_view status_name(cl_int status);

// The Error for a failed call: Errc::failed, code "E_OPENCL".
Error call_error(std::string_view call, cl_int status);

// Status form of a call's result code.
inline Status
check(cl_int status, std::string_view call)
{
  if (status == CL_SUCCESS) {
    return {};
  }
  return fail(call_error(call, status));
}

} // namespace prewarm::opencl

// Returns the error from the enclosing function (Status or Result<T>) when
// `call_` does not return CL_SUCCESS. The message quotes the call's text.
#define PW_CL_CHECK(call_)                                                               \
  do {                                                                                   \
    if (const cl_int pw_cl_status_ = (call_); pw_cl_status_ != CL_SUCCESS) {             \
      return ::std::unexpected<::prewarm::Error>(                                        \
        ::prewarm::opencl::call_error(#call_, pw_cl_status_));                           \
    }                                                                                    \
  } while (false)
