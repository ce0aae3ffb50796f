// SPDX-License-Identifier: Apache-2.0
// Program builds with the build log kept: a failed clBuildProgram becomes an
// Error carrying the compiler's log, which is what a user needs to see.
#pragma once

#include "base/error.hpp"
#include "opencl/cl.hpp"
#include "opencl/owned.hpp"

#include <string>
#include <string_view>

namespace prewarm::opencl {

Result<std::string> build_log(cl_program program, cl_device_id device);

// clBuildProgram for one device; on failure the error includes the build log
// (code "E_OPENCL_BUILD").
Status build(cl_program program, cl_device_id device, std::string_view options);

// clCreateProgramWithSource + build().
Result<UniqueProgram> build_from_source(cl_context context,
                                        cl_device_id device,
                                        std::string_view source,
                                        std::string_view options);

// CL_PROGRAM_BINARIES for the program's single device.
Result<std::string> program_binary(cl_program program);

} // namespace prewarm::opencl
