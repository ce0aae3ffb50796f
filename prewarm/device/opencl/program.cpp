// SPDX-License-Identifier: Apache-2.0
#include "opencl/program.hpp"

#include "opencl/check.hpp"

#include <fmt/format.h>

#include <vector>

namespace prewarm::opencl {

Result<std::string>
build_log(cl_program program, cl_device_id device)
{
  std::size_t size = 0;
  PW_CL_CHECK(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size));
  std::string log(size, '\0');
  if (size > 0) {
    PW_CL_CHECK(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr));
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) {
    log.pop_back();
  }
  return log;
}

Status
build(cl_program program, cl_device_id device, std::string_view options)
{
  const std::string options_text(options);
  const cl_int status = clBuildProgram(program, 1, &device, options_text.c_str(), nullptr, nullptr);
  if (status == CL_SUCCESS) {
    return {};
  }
  const auto log = build_log(program, device);
  return fail(Errc::failed,
              fmt::format("clBuildProgram failed: {} ({}) with options \"{}\"{}{}",
                          status_name(status),
                          status,
                          options_text,
                          log && !log->empty() ? "; build log:\n" : "",
                          log ? *log : std::string{}),
              "E_OPENCL_BUILD");
}

Result<UniqueProgram>
build_from_source(cl_context context, cl_device_id device, std::string_view source, std::string_view options)
{
  const char* text = source.data();
  const std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  UniqueProgram program(clCreateProgramWithSource(context, 1, &text, &length, &status));
  PW_TRY(check(status, "clCreateProgramWithSource"));
  PW_TRY(build(program.get(), device, options));
  return program;
}

Result<std::string>
program_binary(cl_program program)
{
  cl_uint devices = 0;
  PW_CL_CHECK(clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices, nullptr));
  if (devices != 1) {
    return fail(Errc::internal, fmt::format("program has {} devices; the store handles one", devices));
  }
  std::size_t size = 0;
  PW_CL_CHECK(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr));
  if (size == 0) {
    return fail(Errc::failed, "the driver reports no binary for the program (CL_PROGRAM_BINARY_SIZES = 0)");
  }
  std::string binary(size, '\0');
  unsigned char* pointer = reinterpret_cast<unsigned char*>(binary.data());
  PW_CL_CHECK(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof pointer, &pointer, nullptr));
  return binary;
}

} // namespace prewarm::opencl
