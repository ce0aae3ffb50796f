// SPDX-License-Identifier: Apache-2.0
#include "layer/program_queries.hpp"

#include "layer/cl_query.hpp"
#include "layer/device_identity.hpp"
#include "layer/next_dispatch.hpp"

namespace prewarm::layer {

double
ms_since(Clock::time_point start)
{
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string
short_key(const std::string& key)
{
  return key.substr(0, 12);
}

std::vector<cl_device_id>
program_devices(cl_program program)
{
  return query_array<cl_device_id>(
    [&](std::size_t n, void* v, std::size_t* r) { return next().clGetProgramInfo(program, CL_PROGRAM_DEVICES, n, v, r); });
}

std::vector<cl_device_id>
context_devices(cl_context context)
{
  return query_array<cl_device_id>(
    [&](std::size_t n, void* v, std::size_t* r) { return next().clGetContextInfo(context, CL_CONTEXT_DEVICES, n, v, r); });
}

std::vector<std::string>
kernel_names(cl_program program)
{
  const auto names = query_string(
    [&](std::size_t n, void* v, std::size_t* r) { return next().clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, n, v, r); });
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < names.size()) {
    auto end = names.find(';', start);
    if (end == std::string::npos) {
      end = names.size();
    }
    if (end > start) {
      out.push_back(names.substr(start, end - start));
    }
    start = end + 1;
  }
  return out;
}

std::string
build_log(cl_program program, cl_device_id device)
{
  return query_string([&](std::size_t n, void* v, std::size_t* r) {
    return next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, v, r);
  });
}

bool
built_everywhere(cl_program program, const std::vector<cl_device_id>& devices)
{
  for (const auto device : devices) {
    cl_build_status status = CL_BUILD_NONE;
    if (next().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS ||
        status != CL_BUILD_SUCCESS) {
      return false;
    }
  }
  return true;
}

std::vector<std::string>
device_names(const std::vector<cl_device_id>& devices)
{
  std::vector<std::string> names;
  for (const auto device : devices) {
    names.push_back(identity_of(device).device);
  }
  return names;
}

std::vector<std::string>
key_digests(const std::vector<store::ProgramKey>& keys)
{
  std::vector<std::string> out;
  for (const auto& key : keys) {
    out.push_back(key.digest());
  }
  return out;
}

std::vector<cl_device_id>
devices_or(cl_uint count, const cl_device_id* list, std::vector<cl_device_id> fallback)
{
  if (count == 0 || list == nullptr) {
    return fallback;
  }
  return std::vector<cl_device_id>(list, list + count);
}

} // namespace prewarm::layer
