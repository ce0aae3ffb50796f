// SPDX-License-Identifier: Apache-2.0
#include "store/aot_loader.hpp"

#include "opencl/check.hpp"
#include "opencl/program.hpp"

#include <fmt/format.h>

namespace prewarm::store {

std::string
AotLoad::summary() const
{
  if (served()) {
    return fmt::format("aot {} {}", target, key.substr(0, 12));
  }
  return "fallback: " + reason;
}

DeviceProperties
aot_device_properties(const opencl::DeviceRef& device)
{
  DeviceProperties properties = device.properties;
  const auto vendor = properties.find(prop::vendor);
  const auto driver = properties.find(prop::opencl_driver);
  if (vendor != properties.end() && vendor->second == "intel" && driver != properties.end() &&
      !properties.contains(prop::intel_driver)) {
    properties.emplace(prop::intel_driver, driver->second);
  }
  return properties;
}

Result<opencl::UniqueProgram>
build_from_aot_binary(cl_context context, cl_device_id device, std::string_view zebin, std::string_view options)
{
  if (zebin.empty()) {
    return fail(Errc::failed, "the AOT binary is empty");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(zebin.data());
  const std::size_t size = zebin.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  opencl::UniqueProgram program(clCreateProgramWithBinary(context, 1, &device, &size, &bytes, &binary_status, &status));
  // The per-binary status says more (CL_INVALID_BINARY) than the call's, so it comes first.
  if (binary_status != CL_SUCCESS) {
    return fail(Errc::failed, fmt::format("the driver did not take the binary: {} ({})",
                                          opencl::status_name(binary_status), binary_status));
  }
  PW_TRY(opencl::check(status, "clCreateProgramWithBinary"));
  PW_TRY(opencl::build(program.get(), device, options));
  return program;
}

AotLoad
load_aot_program(cl_context context, const opencl::DeviceRef& device, const level_zero::AotPrograms& programs,
                 std::string_view source, std::string_view options)
{
  AotLoad load;
  const auto selection = programs.select(aot_device_properties(device));
  if (selection.target == nullptr) {
    load.reason = selection.reason;
    return load;
  }
  load.target = selection.target->ocloc_device;
  auto lookup = programs.find(*selection.target, source, options);
  if (!lookup.program) {
    load.reason = lookup.reason;
    return load;
  }
  load.key = lookup.program->key;
  auto built = build_from_aot_binary(context, device.device, lookup.program->zebin, options);
  if (!built) {
    load.reason = fmt::format("AOT program {} for {}: {}", load.key.substr(0, 12), load.target,
                              built.error().message());
    return load;
  }
  load.program = std::move(*built);
  return load;
}

} // namespace prewarm::store
