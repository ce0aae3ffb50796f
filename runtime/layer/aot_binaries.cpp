// SPDX-License-Identifier: Apache-2.0
#include "layer/aot_binaries.hpp"

#include "base/device_properties.hpp"
#include "layer/cl_query.hpp"
#include "layer/device_identity.hpp"
#include "layer/layer_settings.hpp"
#include "layer/next_dispatch.hpp"
#include "level_zero/aot_programs.hpp"

#include <fmt/format.h>

#include <mutex>
#include <optional>

namespace prewarm::layer {
namespace {

// cl_intel_device_attribute_query (CL/cl_ext.h names it CL_DEVICE_ID_INTEL).
constexpr cl_device_info k_device_id_intel = 0x4251;
constexpr cl_device_info k_ip_version_intel = 0x4250; // CL_DEVICE_IP_VERSION_INTEL

struct OpenedPrograms
{
  std::optional<level_zero::AotPrograms> programs;
  std::string error; // the aot/ directory could not be read
};

const OpenedPrograms&
installed_programs()
{
  // Leaked on purpose (see layer_settings.cpp).
  static const OpenedPrograms* const opened = [] {
    auto* out = new OpenedPrograms;
    if (auto programs = level_zero::AotPrograms::open(settings().store)) {
      out->programs = std::move(*programs);
    } else {
      out->error = programs.error().message();
    }
    return out;
  }();
  return *opened;
}

// The device as the AOT selection reads it (the same keys as the runtime's
// host probe: runtime/opencl/device.cpp).
DeviceProperties
aot_properties(cl_device_id device)
{
  const auto& id = identity_of(device);
  DeviceProperties properties;
  properties.emplace(prop::vendor, id.vendor);
  if (id.vendor != "intel") {
    return properties;
  }
  const auto extensions = query_string(
    [&](std::size_t n, void* v, std::size_t* r) { return next().clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, n, v, r); });
  cl_uint pci_id = 0;
  if (extensions.find("cl_intel_device_attribute_query") != std::string::npos &&
      next().clGetDeviceInfo(device, k_device_id_intel, sizeof pci_id, &pci_id, nullptr) == CL_SUCCESS) {
    properties.emplace(prop::pci_id, fmt::format("0x{:04x}", pci_id));
    // The IP version names the stepping, which decides which binary the
    // driver loads (aot_programs.hpp); 0x030dc008 is 12.55.8 (dg2-g10-c0).
    cl_uint ip = 0;
    if (next().clGetDeviceInfo(device, k_ip_version_intel, sizeof ip, &ip, nullptr) == CL_SUCCESS && ip != 0) {
      properties.emplace(prop::intel_ip_version, intel_ip_version_text(ip));
    }
  }
  if (!id.driver.empty()) {
    properties.emplace(prop::intel_driver, id.driver);
  }
  return properties;
}

} // namespace

AotBinary
find_aot_binary(cl_device_id device, std::string_view source, std::string_view options)
{
  AotBinary out;
  const auto& opened = installed_programs();
  if (!opened.programs) {
    out.reason = fmt::format("AOT programs unreadable: {}", opened.error);
    return out;
  }
  if (opened.programs->targets().empty()) {
    out.installed = false;
    out.reason = "no AOT programs installed";
    return out;
  }
  const auto selection = opened.programs->select(aot_properties(device));
  if (selection.target == nullptr) {
    out.reason = selection.reason;
    return out;
  }
  out.target = selection.target->ocloc_device;
  auto lookup = opened.programs->find(*selection.target, source, options);
  if (!lookup.program) {
    out.reason = lookup.reason;
    return out;
  }
  out.key = lookup.program->key;
  out.zebin = std::move(lookup.program->zebin);
  return out;
}

} // namespace prewarm::layer
