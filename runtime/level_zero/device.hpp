// SPDX-License-Identifier: Apache-2.0
// Level Zero drivers and devices as prewarm sees them: initialisation,
// enumeration into DeviceProperties (base/device_properties.hpp), and an
// explicit device choice.
//
// Properties reported for a device:
//   vendor              "intel" for PCI vendor 0x8086, else "0x<vendor id>"
//   pci-id              ze_device_properties_t.deviceId, "0x56a5"
//   pci-revision        from sysfs (/sys/bus/pci/devices/<bdf>/revision) when the
//                       driver gives the PCI address (zeDevicePciGetPropertiesExt)
//   level-zero.device   ze_device_properties_t.name
//   intel.driver        ze_driver_properties_t.driverVersion decoded as NEO encodes it
//                       (major << 24 | minor << 16 | build), "22.43.24595" — the same
//                       spelling as OpenCL's CL_DRIVER_VERSION and `ocloc query`
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"

#include <level_zero/ze_api.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::level_zero {

struct ZeDeviceRef
{
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  std::size_t index = 0;     // position in enumerate_devices()
  std::string description;   // "level-zero 0: <name> (pci 0x56a5, driver 22.43.24595)"
  DeviceProperties properties;
};

// zeInit(0) once per process; later calls return the first outcome. With no
// Level Zero driver installed (or none that finds hardware) the loader answers
// ZE_RESULT_ERROR_UNINITIALIZED: reported as Errc::not_applicable with a hint.
Status initialize();

// GPU devices of every driver, in driver then device order.
Result<std::vector<ZeDeviceRef>> enumerate_devices();

// The device a selector names: "N" (index) or a case-insensitive substring of
// its name or "0x<pci id>". There is no default: an empty selector is a usage
// error that lists the devices (the caller must say which GPU it means).
Result<ZeDeviceRef> select_device(std::string_view selector);

// Whether the loader wraps driver handles in its own objects ("intercept"):
// with ZE_ENABLE_LOADER_INTERCEPT set, or automatically with more than one
// driver (an Intel GPU and an NPU driver on Meteor Lake, say). Loader 1.8.12
// does not wrap the build log of a FAILED zeModuleCreate, so reading or
// destroying that log then crashes inside the loader (seen with the test
// double); module.cpp asks for no log in that mode.
bool loader_wraps_handles();

// NEO's encoding of ze_driver_properties_t.driverVersion -> "22.43.24595".
std::string decode_driver_version(std::uint32_t encoded);

// "0x56a5" for 0x56A5.
std::string pci_id_text(std::uint32_t id);

} // namespace prewarm::level_zero
