// SPDX-License-Identifier: Apache-2.0
#include "layer/program_binaries.hpp"

#include "layer/cl_query.hpp"
#include "layer/device_identity.hpp"
#include "layer/next_dispatch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace prewarm::layer {

DeviceBinaries
program_binaries(cl_program program)
{
  const auto devices = query_array<cl_device_id>(
    [&](std::size_t n, void* v, std::size_t* r) { return next().clGetProgramInfo(program, CL_PROGRAM_DEVICES, n, v, r); });
  std::vector<std::size_t> sizes(devices.size());
  if (devices.empty() ||
      next().clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizes.size() * sizeof(std::size_t), sizes.data(), nullptr) !=
        CL_SUCCESS) {
    return {};
  }
  std::vector<std::string> binaries(devices.size());
  std::vector<unsigned char*> pointers(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    binaries[i].resize(sizes[i]);
    pointers[i] = reinterpret_cast<unsigned char*>(binaries[i].data());
  }
  if (next().clGetProgramInfo(program, CL_PROGRAM_BINARIES, pointers.size() * sizeof(unsigned char*), pointers.data(), nullptr) !=
      CL_SUCCESS) {
    return {};
  }
  DeviceBinaries out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    out.emplace_back(devices[i], std::move(binaries[i]));
  }
  return out;
}

cl_program
program_from_binaries(cl_context context, const std::vector<cl_device_id>& devices, const std::vector<std::string>& binaries,
                      const char* options, std::string& reason)
{
  std::vector<std::size_t> sizes;
  std::vector<const unsigned char*> pointers;
  for (const auto& binary : binaries) {
    sizes.push_back(binary.size());
    pointers.push_back(reinterpret_cast<const unsigned char*>(binary.data()));
  }
  std::vector<cl_int> statuses(devices.size(), CL_SUCCESS);
  cl_int status = CL_SUCCESS;
  cl_program program = next().clCreateProgramWithBinary(context, static_cast<cl_uint>(devices.size()), devices.data(), sizes.data(),
                                                        pointers.data(), statuses.data(), &status);
  if (program == nullptr || status != CL_SUCCESS) {
    reason = fmt::format("the driver refused the stored binary (clCreateProgramWithBinary {})", status);
    if (program != nullptr) {
      next().clReleaseProgram(program);
    }
    return nullptr;
  }
  status = next().clBuildProgram(program, static_cast<cl_uint>(devices.size()), devices.data(), options, nullptr, nullptr);
  if (status != CL_SUCCESS) {
    reason = fmt::format("the stored binary did not build (clBuildProgram {})", status);
    next().clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

bool
is_pocl(cl_device_id device)
{
  return identity_of(device).platform == "Portable Computing Language";
}

DeviceBinaries
with_lazily_generated_code(const ProgramSource& source, DeviceBinaries binaries)
{
  if (source.context == nullptr || (source.payload.empty() && source.link_inputs.empty()) || binaries.empty() ||
      !std::all_of(binaries.begin(), binaries.end(), [](const auto& b) { return is_pocl(b.first) && !b.second.empty(); })) {
    return binaries;
  }
  if (const char* cache = std::getenv("POCL_KERNEL_CACHE"); cache != nullptr && std::string_view(cache) == "0") {
    return binaries;
  }
  std::vector<cl_device_id> devices;
  for (const auto& binary : binaries) {
    devices.push_back(binary.first);
  }
  const std::string options(source.options);
  cl_int status = CL_SUCCESS;
  cl_program twin = nullptr;
  if (!source.link_inputs.empty()) {
    twin = next().clLinkProgram(source.context, static_cast<cl_uint>(devices.size()), devices.data(), options.c_str(),
                                static_cast<cl_uint>(source.link_inputs.size()), source.link_inputs.data(), nullptr, nullptr, &status);
  } else if (source.kind == store::SourceKind::source) {
    const char* text = source.payload.data();
    const std::size_t length = source.payload.size();
    twin = next().clCreateProgramWithSource(source.context, 1, &text, &length, &status);
  } else {
    twin = next().clCreateProgramWithIL(source.context, source.payload.data(), source.payload.size(), &status);
  }
  if (twin == nullptr || status != CL_SUCCESS) {
    if (twin != nullptr) {
      next().clReleaseProgram(twin);
    }
    return binaries;
  }
  DeviceBinaries fresh;
  if (!source.link_inputs.empty() ||
      next().clBuildProgram(twin, static_cast<cl_uint>(devices.size()), devices.data(), options.c_str(), nullptr, nullptr) ==
        CL_SUCCESS) {
    fresh = program_binaries(twin);
  }
  next().clReleaseProgram(twin);
  if (fresh.size() != binaries.size() ||
      std::any_of(fresh.begin(), fresh.end(), [](const auto& b) { return b.second.empty(); })) {
    return binaries;
  }
  return fresh;
}

} // namespace prewarm::layer
