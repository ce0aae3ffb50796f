// SPDX-License-Identifier: Apache-2.0
// TEST DOUBLE. PREWARM_HOST_DEVICES=<file.json> replaces the whole host probe
// with a fixed description, so the container and CI tests can install a
// bundle "for an Arc A770" on a machine that has none. It exists for tests;
// production images must not set it (the runtime announces it on stderr
// every time it is used).
//
// File format: a JSON list of property maps, each one device; every value a
// string. An optional "description" member names the device in messages and
// is not a property:
//   [ {"description": "test A770", "vendor": "intel", "pci-id": "0x56a0"},
//     {"vendor": "cpu", "opencl.device": "cpu-haswell"} ]
#pragma once

#include "base/error.hpp"
#include "host/host_device.hpp"

#include <filesystem>
#include <string_view>
#include <vector>

namespace prewarm::host {

inline constexpr std::string_view k_host_devices_variable = "PREWARM_HOST_DEVICES";

// Errors (Errc::usage) name the file and the element that is wrong.
Result<std::vector<HostDevice>> load_host_description(const std::filesystem::path& file);
// The same from text; `origin` names the source in messages.
Result<std::vector<HostDevice>> parse_host_description(std::string_view json, std::string_view origin);

// The inverse, for `status --json` and tests.
std::string host_description_json(const std::vector<HostDevice>& devices);

} // namespace prewarm::host
