// SPDX-License-Identifier: Apache-2.0
#include "level_zero/device.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "level_zero/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <mutex>
#include <optional>

namespace prewarm::level_zero {

namespace {

// ze_device_ip_version_ext_t (extension ZE_extension_device_ip_version, Level
// Zero spec 1.2 and later): Debian 12's headers (libze-dev 1.8) lack it, so it
// is defined here from the specification, under a name of our own so a newer
// header does not collide. Chained to zeDeviceGetProperties; NEO fills
// ipVersion in the HardwareIpVersion layout CL_DEVICE_IP_VERSION_INTEL uses
// (architecture << 22 | release << 14 | revision). Measured on NEO 26.27's
// virtual devices: bmg 0x05004000 = 20.1.0, mtl 0x03118004 = 12.70.4,
// acm-g11 0x030e0005 = 12.56.5. A driver that does not know the extension
// leaves it 0: then no IP version is reported.
constexpr auto k_structure_type_device_ip_version_ext = static_cast<ze_structure_type_t>(0x1000f);
struct DeviceIpVersionExt
{
  ze_structure_type_t stype = k_structure_type_device_ip_version_ext;
  const void* pNext = nullptr;
  uint32_t ipVersion = 0;
};

std::string
lower(std::string_view text)
{
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "0x05\n" from sysfs -> "0x05".
std::optional<std::string>
sysfs_revision(const ze_pci_address_ext_t& address)
{
  const auto path = fmt::format("/sys/bus/pci/devices/{:04x}:{:02x}:{:02x}.{:x}/revision", address.domain,
                                address.bus, address.device, address.function);
  auto text = read_file(path, 64);
  if (!text) {
    return std::nullopt;
  }
  std::string value = *text;
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) {
    value.pop_back();
  }
  return value.empty() ? std::nullopt : std::optional(lower(value));
}

} // namespace

std::string
decode_driver_version(std::uint32_t encoded)
{
  return fmt::format("{}.{}.{}", encoded >> 24, (encoded >> 16) & 0xffu, encoded & 0xffffu);
}

std::string
pci_id_text(std::uint32_t id)
{
  return fmt::format("0x{:04x}", id);
}

Status
initialize()
{
  static std::once_flag once;
  static ze_result_t outcome = ZE_RESULT_SUCCESS;
  std::call_once(once, [] { outcome = zeInit(0); });
  if (outcome == ZE_RESULT_ERROR_UNINITIALIZED) {
    return fail(Errc::not_applicable,
                "zeInit failed: ZE_RESULT_ERROR_UNINITIALIZED (no Level Zero driver found a device; "
                "an Intel GPU needs intel-level-zero-gpu / libze-intel-gpu1 and access to /dev/dri)");
  }
  if (outcome != ZE_RESULT_SUCCESS) {
    return fail(ze_error("zeInit(0)", outcome));
  }
  return {};
}

bool
loader_wraps_handles()
{
  static const bool wraps = [] {
    // The loader's own test (getenv_tobool): "1" or "true" switches it on.
    const char* value = std::getenv("ZE_ENABLE_LOADER_INTERCEPT");
    if (value != nullptr && (std::string_view(value) == "1" || std::string_view(value) == "true")) {
      return true;
    }
    uint32_t drivers = 0;
    return initialize() && zeDriverGet(&drivers, nullptr) == ZE_RESULT_SUCCESS && drivers > 1;
  }();
  return wraps;
}

Result<std::vector<ZeDeviceRef>>
enumerate_devices()
{
  PW_TRY(initialize());
  uint32_t driver_count = 0;
  PW_ZE_CHECK(zeDriverGet(&driver_count, nullptr));
  std::vector<ze_driver_handle_t> drivers(driver_count);
  PW_ZE_CHECK(zeDriverGet(&driver_count, drivers.data()));
  drivers.resize(driver_count);

  std::vector<ZeDeviceRef> devices;
  for (auto driver : drivers) {
    ze_driver_properties_t driver_properties{};
    driver_properties.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    PW_ZE_CHECK(zeDriverGetProperties(driver, &driver_properties));
    uint32_t device_count = 0;
    PW_ZE_CHECK(zeDeviceGet(driver, &device_count, nullptr));
    std::vector<ze_device_handle_t> handles(device_count);
    PW_ZE_CHECK(zeDeviceGet(driver, &device_count, handles.data()));
    handles.resize(device_count);
    for (auto device : handles) {
      ze_device_properties_t p{};
      p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      DeviceIpVersionExt ip;
      p.pNext = &ip;
      PW_ZE_CHECK(zeDeviceGetProperties(device, &p));
      if (p.type != ZE_DEVICE_TYPE_GPU) {
        continue;
      }
      ZeDeviceRef ref;
      ref.driver = driver;
      ref.device = device;
      ref.index = devices.size();
      const bool intel = p.vendorId == 0x8086;
      ref.properties.emplace(prop::vendor, intel ? "intel" : pci_id_text(p.vendorId));
      ref.properties.emplace(prop::pci_id, pci_id_text(p.deviceId));
      ref.properties.emplace(prop::level_zero_device, std::string(p.name, ::strnlen(p.name, sizeof p.name)));
      if (intel) {
        // Only NEO's encoding is known; another vendor's number would be misread.
        ref.properties.emplace(prop::intel_driver, decode_driver_version(driver_properties.driverVersion));
        if (ip.ipVersion != 0) {
          ref.properties.emplace(prop::intel_ip_version, intel_ip_version_text(ip.ipVersion));
        }
      }
      ze_pci_ext_properties_t pci{};
      pci.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
      if (zeDevicePciGetPropertiesExt(device, &pci) == ZE_RESULT_SUCCESS) {
        if (auto revision = sysfs_revision(pci.address)) {
          ref.properties.emplace(prop::pci_revision, *revision);
        }
      }
      ref.description = fmt::format("level-zero {}: {} (pci {}, driver {})", ref.index,
                                    ref.properties[std::string(prop::level_zero_device)],
                                    pci_id_text(p.deviceId), decode_driver_version(driver_properties.driverVersion));
      devices.push_back(std::move(ref));
    }
  }
  return devices;
}

Result<ZeDeviceRef>
select_device(std::string_view selector)
{
  PW_ASSIGN(auto devices, enumerate_devices());
  auto listing = [&] {
    std::string text;
    for (const auto& d : devices) {
      text += "\n  " + d.description;
    }
    return text.empty() ? std::string("\n  (none)") : text;
  };
  if (selector.empty()) {
    return fail(Errc::usage, "no Level Zero device selected (name one by index, name or PCI id); devices:" + listing());
  }
  const bool numeric = std::ranges::all_of(selector, [](unsigned char c) { return std::isdigit(c) != 0; });
  if (numeric) {
    const auto index = std::stoul(std::string(selector));
    if (index < devices.size()) {
      return devices[index];
    }
  } else {
    const auto needle = lower(selector);
    for (const auto& d : devices) {
      const auto name = lower(d.properties.at(std::string(prop::level_zero_device)));
      if (name.find(needle) != std::string::npos || d.properties.at(std::string(prop::pci_id)) == needle) {
        return d;
      }
    }
  }
  return fail(Errc::usage, fmt::format("no Level Zero device matches {}; devices:{}", in_quotes(selector), listing()));
}

} // namespace prewarm::level_zero
