// SPDX-License-Identifier: Apache-2.0
#include "host/host_description_file.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace prewarm::host {

Result<std::vector<HostDevice>>
load_host_description(const std::filesystem::path& file)
{
  PW_ASSIGN_CTX(const std::string text, fmt::format("{} {}", k_host_devices_variable, in_quotes(file.string())),
                read_file(file.string(), 1 << 20));
  return parse_host_description(text, file.string());
}

Result<std::vector<HostDevice>>
parse_host_description(std::string_view text, std::string_view origin)
{
  const auto where = in_quotes(origin);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::usage, fmt::format("{}: not JSON: {}", where, e.what()));
  }
  if (!doc.is_array()) {
    return fail(Errc::usage, fmt::format("{}: expected a JSON list of property maps", where));
  }
  std::vector<HostDevice> devices;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const auto& element = doc[i];
    if (!element.is_object()) {
      return fail(Errc::usage, fmt::format("{}: element {} is not an object", where, i));
    }
    HostDevice device;
    for (const auto& [key, value] : element.items()) {
      if (!value.is_string()) {
        return fail(Errc::usage, fmt::format("{}: element {}: value of {} is not a string", where, i, in_quotes(key)));
      }
      if (key == "description") {
        device.description = value.get<std::string>();
      } else {
        device.properties.emplace(key, value.get<std::string>());
      }
    }
    if (device.description.empty()) {
      device.description = fmt::format("test device {}", i);
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

std::string
host_description_json(const std::vector<HostDevice>& devices)
{
  auto doc = nlohmann::json::array();
  for (const auto& device : devices) {
    nlohmann::json element = nlohmann::json::object();
    element["description"] = device.description;
    for (const auto& [key, value] : device.properties) {
      element[key] = value;
    }
    doc.push_back(std::move(element));
  }
  return doc.dump();
}

} // namespace prewarm::host
