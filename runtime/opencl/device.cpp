// SPDX-License-Identifier: Apache-2.0
#include "opencl/device.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "opencl/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace prewarm::opencl {
namespace {

// NVIDIA's PCI location query (cl_nv_device_attribute_query); not in the
// Khronos headers Debian ships.
constexpr cl_device_info k_device_pci_bus_id_nv = 0x4008;
constexpr cl_device_info k_device_pci_slot_id_nv = 0x4009;
constexpr cl_device_info k_device_pci_domain_id_nv = 0x400A;

template<typename T>
std::optional<T>
device_info_value(cl_device_id device, cl_device_info what)
{
  T value{};
  if (clGetDeviceInfo(device, what, sizeof value, &value, nullptr) != CL_SUCCESS) {
    return std::nullopt;
  }
  return value;
}

std::string
lower(std::string_view text)
{
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string
hex4(cl_uint value)
{
  return fmt::format("0x{:04x}", value & 0xffffu);
}

// "0x56a5\n" from sysfs -> "0x56a5"; the PCI location comes from the driver.
std::optional<std::string>
sysfs_pci_attribute(cl_uint domain, cl_uint bus, cl_uint device, cl_uint function, std::string_view attribute)
{
  const auto path = fmt::format("/sys/bus/pci/devices/{:04x}:{:02x}:{:02x}.{:x}/{}", domain, bus, device, function, attribute);
  auto text = read_file(path, 64);
  if (!text) {
    return std::nullopt;
  }
  std::string value = *text;
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) {
    value.pop_back();
  }
  return lower(value);
}

struct PciLocation
{
  cl_uint domain = 0, bus = 0, device = 0, function = 0;
};

std::optional<PciLocation>
pci_location(cl_device_id device)
{
  if (device_has_extension(device, "cl_khr_pci_bus_info")) {
    if (auto info = device_info_value<cl_device_pci_bus_info_khr>(device, CL_DEVICE_PCI_BUS_INFO_KHR)) {
      return PciLocation{info->pci_domain, info->pci_bus, info->pci_device, info->pci_function};
    }
  }
  if (device_has_extension(device, "cl_nv_device_attribute_query")) {
    const auto bus = device_info_value<cl_uint>(device, k_device_pci_bus_id_nv);
    const auto slot = device_info_value<cl_uint>(device, k_device_pci_slot_id_nv);
    const auto domain = device_info_value<cl_uint>(device, k_device_pci_domain_id_nv);
    if (bus && slot) {
      // NVIDIA packs device and function into the slot id as device<<3 | function.
      return PciLocation{domain.value_or(0), *bus, *slot >> 3, *slot & 7};
    }
  }
  return std::nullopt;
}

std::string
vendor_of(cl_device_id device)
{
  const auto type = device_info_value<cl_device_type>(device, CL_DEVICE_TYPE).value_or(0);
  return opencl_vendor_name((type & CL_DEVICE_TYPE_CPU) != 0, device_info_value<cl_uint>(device, CL_DEVICE_VENDOR_ID).value_or(0));
}

DeviceProperties
properties_of(cl_platform_id platform, cl_device_id device)
{
  DeviceProperties p;
  if (auto vendor = vendor_of(device); !vendor.empty()) {
    p.emplace(prop::vendor, vendor);
  }
  const auto put = [&p](std::string_view key, Result<std::string> value) {
    if (value) {
      p.emplace(key, std::move(*value));
    }
  };
  put(prop::opencl_platform, platform_info_string(platform, CL_PLATFORM_NAME));
  put(prop::opencl_platform_version, platform_info_string(platform, CL_PLATFORM_VERSION));
  put(prop::opencl_device, device_info_string(device, CL_DEVICE_NAME));
  put(prop::opencl_device_version, device_info_string(device, CL_DEVICE_VERSION));
  put(prop::opencl_driver, device_info_string(device, CL_DRIVER_VERSION));

  if (device_has_extension(device, "cl_intel_device_attribute_query")) {
    if (auto id = device_info_value<cl_uint>(device, CL_DEVICE_ID_INTEL)) {
      p.emplace(prop::pci_id, hex4(*id));
    }
    // The stepping, which the PCI id does not tell (AOT selection: level_zero/aot_programs.hpp).
    if (auto ip = device_info_value<cl_uint>(device, CL_DEVICE_IP_VERSION_INTEL); ip && *ip != 0) {
      p.emplace(prop::intel_ip_version, intel_ip_version_text(*ip));
    }
  }
  // Intel's OpenCL driver (NEO) reports its release as CL_DRIVER_VERSION,
  // the same string ocloc's OCL_DRIVER_VERSION prints: an AOT slice requires
  // it as intel.driver, and a host with an OpenCL ICD but no Level Zero
  // driver (which reports it otherwise) must still be able to match.
  if (const auto vendor = p.find(prop::vendor); vendor != p.end() && vendor->second == "intel") { // a GPU (CPUs are "cpu")
    if (const auto driver = p.find(prop::opencl_driver); driver != p.end()) {
      p.emplace(prop::intel_driver, driver->second);
    }
    // Part of every .cl_cache key NEO computes: a slice of them records it.
    // The string is read by the extension checks anyway: no extra cost.
    if (auto extensions = device_info_string(device, CL_DEVICE_EXTENSIONS)) {
      p.emplace(prop::intel_opencl_extensions, opencl_extensions_value(*extensions));
    }
  }
  if (auto location = pci_location(device)) {
    if (!p.contains(prop::pci_id)) {
      if (auto id = sysfs_pci_attribute(location->domain, location->bus, location->device, location->function, "device")) {
        p.emplace(prop::pci_id, *id);
      }
    }
    if (auto revision = sysfs_pci_attribute(location->domain, location->bus, location->device, location->function, "revision")) {
      p.emplace(prop::pci_revision, *revision);
    }
  }
  if (device_has_extension(device, "cl_nv_device_attribute_query")) {
    const auto major = device_info_value<cl_uint>(device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
    const auto minor = device_info_value<cl_uint>(device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
    if (major && minor) {
      p.emplace(prop::nvidia_sm, std::to_string(*major * 10 + *minor));
    }
    if (auto driver = device_info_string(device, CL_DRIVER_VERSION)) {
      p.emplace(prop::nvidia_driver, *driver); // NVIDIA's OpenCL reports the kernel driver version
    }
  }
  return p;
}

std::string
property_or(const DeviceProperties& p, std::string_view key, std::string_view fallback = "?")
{
  const auto it = p.find(key);
  return it == p.end() ? std::string(fallback) : it->second;
}

std::string
device_list(const std::vector<DeviceRef>& devices)
{
  std::string text;
  for (const auto& d : devices) {
    text += "\n  " + d.description;
  }
  return text;
}

} // namespace

Result<std::string>
platform_info_string(cl_platform_id platform, cl_platform_info what)
{
  std::size_t size = 0;
  PW_CL_CHECK(clGetPlatformInfo(platform, what, 0, nullptr, &size));
  std::string value(size, '\0');
  PW_CL_CHECK(clGetPlatformInfo(platform, what, size, value.data(), nullptr));
  while (!value.empty() && value.back() == '\0') {
    value.pop_back();
  }
  return value;
}

Result<std::string>
device_info_string(cl_device_id device, cl_device_info what)
{
  std::size_t size = 0;
  PW_CL_CHECK(clGetDeviceInfo(device, what, 0, nullptr, &size));
  std::string value(size, '\0');
  PW_CL_CHECK(clGetDeviceInfo(device, what, size, value.data(), nullptr));
  while (!value.empty() && value.back() == '\0') {
    value.pop_back();
  }
  return value;
}

bool
device_has_extension(cl_device_id device, std::string_view extension)
{
  const auto extensions = device_info_string(device, CL_DEVICE_EXTENSIONS);
  if (!extensions) {
    return false;
  }
  std::string_view rest = *extensions;
  while (!rest.empty()) {
    const auto space = rest.find(' ');
    const auto word = rest.substr(0, space);
    if (word == extension) {
      return true;
    }
    if (space == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(space + 1);
  }
  return false;
}

Result<std::vector<DeviceRef>>
enumerate_devices()
{
  cl_uint platform_count = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
  if (status == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (status == CL_SUCCESS && platform_count == 0)) {
    return fail(Errc::failed,
                "no OpenCL platform: no ICD is registered in /etc/OpenCL/vendors (install pocl-opencl-icd "
                "for the CPU, or the GPU vendor's OpenCL driver)",
                "E_NO_OPENCL");
  }
  PW_TRY(check(status, "clGetPlatformIDs"));
  std::vector<cl_platform_id> platforms(platform_count);
  PW_CL_CHECK(clGetPlatformIDs(platform_count, platforms.data(), nullptr));

  std::vector<DeviceRef> devices;
  for (cl_platform_id platform : platforms) {
    cl_uint device_count = 0;
    const cl_int device_status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
    if (device_status == CL_DEVICE_NOT_FOUND || device_count == 0) {
      continue; // a platform whose hardware is absent (e.g. Intel's ICD without an Intel GPU)
    }
    PW_TRY(check(device_status, "clGetDeviceIDs"));
    std::vector<cl_device_id> ids(device_count);
    PW_CL_CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr));
    for (cl_device_id id : ids) {
      DeviceRef ref;
      ref.platform = platform;
      ref.device = id;
      ref.index = static_cast<int>(devices.size());
      ref.properties = properties_of(platform, id);
      const auto type = device_info_value<cl_device_type>(id, CL_DEVICE_TYPE).value_or(0);
      ref.is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
      ref.description = fmt::format("{}: {} ({}, {}, driver {})",
                                    ref.index,
                                    property_or(ref.properties, prop::opencl_device),
                                    property_or(ref.properties, prop::opencl_platform),
                                    property_or(ref.properties, prop::opencl_device_version),
                                    property_or(ref.properties, prop::opencl_driver));
      devices.push_back(std::move(ref));
    }
  }
  if (devices.empty()) {
    return fail(Errc::failed,
                fmt::format("no OpenCL device: {} platform(s) registered, none reports a device", platform_count),
                "E_NO_OPENCL");
  }
  return devices;
}

Result<DeviceRef>
select_device(const std::vector<DeviceRef>& devices, std::string_view selector)
{
  if (devices.empty()) {
    return fail(Errc::failed, "no OpenCL device", "E_NO_OPENCL");
  }
  if (selector.empty()) {
    const auto gpu = std::ranges::find_if(devices, [](const DeviceRef& d) { return d.is_gpu; });
    return gpu != devices.end() ? *gpu : devices.front();
  }
  int index = -1;
  const auto [end, ec] = std::from_chars(selector.data(), selector.data() + selector.size(), index);
  if (ec == std::errc{} && end == selector.data() + selector.size()) {
    if (index < 0 || static_cast<std::size_t>(index) >= devices.size()) {
      return fail(Errc::usage,
                  fmt::format("device index {} out of range; devices:{}", index, device_list(devices)),
                  "E_NO_SUCH_DEVICE");
    }
    return devices[static_cast<std::size_t>(index)];
  }
  const auto needle = lower(selector);
  std::vector<const DeviceRef*> matches;
  for (const auto& d : devices) {
    if (lower(property_or(d.properties, prop::opencl_device, "")).find(needle) != std::string::npos ||
        lower(property_or(d.properties, prop::opencl_platform, "")).find(needle) != std::string::npos) {
      matches.push_back(&d);
    }
  }
  if (matches.empty()) {
    return fail(Errc::usage,
                fmt::format("no OpenCL device matches {}; devices:{}", in_quotes(selector), device_list(devices)),
                "E_NO_SUCH_DEVICE");
  }
  if (matches.size() > 1) {
    // Several identical GPUs in one host are the common case; the first is as
    // good as any, but say which one was taken.
    log::verbose("{} matches {} OpenCL devices; using {}", in_quotes(selector), matches.size(), matches.front()->description);
  }
  return *matches.front();
}

Result<DeviceRef>
select_device(std::string_view selector)
{
  PW_ASSIGN(auto devices, enumerate_devices());
  return select_device(devices, selector);
}

} // namespace prewarm::opencl
