// SPDX-License-Identifier: Apache-2.0
#include "manifest/intel_profile.hpp"

#include "base/files.hpp"
#include "manifest/embedded_manifests.hpp"
#include "manifest/yaml_reader.hpp"

#include <fmt/format.h>

#include <regex>

namespace prewarm::manifest {

namespace {

using yaml::Map;
using yaml::Source;

Result<std::string>
required_string(const Map& map, std::string_view key)
{
  PW_ASSIGN(auto node, map.required(key));
  return yaml::read_string(map.source(), node, map.path_of(key));
}

// A value that must match `pattern` (described by `shape` in the message).
Result<std::string>
checked(const Map& map, const YAML::Node& node, std::string_view key, std::string text, const char* pattern,
        std::string_view shape)
{
  if (!std::regex_match(text, std::regex(pattern))) {
    return fail(yaml::error_at(map.source(), node.Mark(), map.path_of(key),
                               fmt::format("expected {}, got '{}'", shape, text)));
  }
  return text;
}

// {value: SCALAR, source: TEXT}
Result<std::pair<YAML::Node, std::string>>
sourced(const Map& parent, std::string_view key)
{
  PW_ASSIGN(auto node, parent.required(key));
  PW_ASSIGN(auto map, Map::read(parent.source(), node, parent.path_of(key), {"value", "source"}));
  PW_ASSIGN(auto source_text, required_string(map, "source"));
  if (source_text.empty()) {
    return fail(yaml::error_at(parent.source(), node.Mark(), map.path_of("source"),
                               "every value says where it comes from (NEO file:line, \"measured on a card\", "
                               "\"virtual device trace\")"));
  }
  PW_ASSIGN(auto value, map.required("value"));
  return std::pair{value, source_text};
}

Result<ProfileValue>
sourced_string(const Map& parent, std::string_view key, const char* pattern = nullptr, std::string_view shape = {})
{
  PW_ASSIGN(auto pair, sourced(parent, key));
  const auto path = yaml::join_path(parent.path_of(key), "value");
  PW_ASSIGN(auto text, yaml::read_string(parent.source(), pair.first, path));
  if (pattern != nullptr && !std::regex_match(text, std::regex(pattern))) {
    return fail(yaml::error_at(parent.source(), pair.first.Mark(), path, fmt::format("expected {}, got '{}'", shape, text)));
  }
  return ProfileValue{std::move(text), std::move(pair.second)};
}

Result<ProfileBool>
sourced_bool(const Map& parent, std::string_view key)
{
  PW_ASSIGN(auto pair, sourced(parent, key));
  PW_ASSIGN(auto value, yaml::read_bool(parent.source(), pair.first, yaml::join_path(parent.path_of(key), "value")));
  return ProfileBool{value, std::move(pair.second)};
}

Result<std::vector<AddedExtension>>
read_added_extensions(const Map& extensions)
{
  std::vector<AddedExtension> out;
  PW_ASSIGN(auto node, extensions.required("add"));
  PW_ASSIGN(auto items, yaml::read_list(extensions.source(), node, extensions.path_of("add"), yaml::Emptiness::allowed));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto path = yaml::index_path(extensions.path_of("add"), i);
    PW_ASSIGN(auto map, Map::read(extensions.source(), items[i], path, {"name", "after", "when", "source"}));
    AddedExtension added;
    PW_ASSIGN(auto name_node, map.required("name"));
    PW_ASSIGN(added.name, required_string(map, "name"));
    PW_ASSIGN(added.name, checked(map, name_node, "name", added.name, "cl_[a-z0-9_]+", "an extension name (cl_...)"));
    PW_ASSIGN(added.after, required_string(map, "after"));
    PW_ASSIGN(auto when_node, map.required("when"));
    PW_ASSIGN(auto when, required_string(map, "when"));
    if (when == "always") {
      added.when = AddedExtension::When::always;
    } else if (when == "libva") {
      added.when = AddedExtension::When::libva;
    } else {
      return fail(yaml::error_at(map.source(), when_node.Mark(), map.path_of("when"),
                                 fmt::format("expected always or libva, got '{}'", when)));
    }
    PW_ASSIGN(added.source, required_string(map, "source"));
    out.push_back(std::move(added));
  }
  return out;
}

Result<IntelProfile>
read_profile(const Source& source, const YAML::Node& root)
{
  IntelProfile profile;
  profile.source_name = source.name;
  PW_ASSIGN(auto top, Map::read(source, root, "",
                                {"version", "target", "recorder", "driver", "key", "opencl", "level_zero",
                                 "device_name", "unknown"}));
  PW_ASSIGN(auto version_node, top.required("version"));
  PW_ASSIGN(auto version, yaml::read_integer(source, version_node, "version", 1, 1));
  (void)version;
  PW_ASSIGN(profile.target, required_string(top, "target"));

  PW_ASSIGN(auto recorder_node, top.required("recorder"));
  PW_ASSIGN(auto recorder, Map::read(source, recorder_node, "recorder", {"product", "device_id"}));
  PW_ASSIGN(profile.recorder_product, required_string(recorder, "product"));
  PW_ASSIGN(auto recorder_id_node, recorder.required("device_id"));
  PW_ASSIGN(profile.recorder_device_id, required_string(recorder, "device_id"));
  PW_ASSIGN(profile.recorder_device_id, checked(recorder, recorder_id_node, "device_id", profile.recorder_device_id,
                                                "0x[0-9a-f]{4}", "\"0x\" and 4 lowercase hex digits"));

  PW_ASSIGN(auto driver_node, top.required("driver"));
  PW_ASSIGN(auto driver, Map::read(source, driver_node, "driver", {"packages", "source"}));
  PW_ASSIGN(profile.packages_source, required_string(driver, "source"));
  PW_ASSIGN(auto packages_node, driver.required("packages"));
  PW_ASSIGN(auto packages, Map::read_any_keys(source, packages_node, driver.path_of("packages")));
  for (const auto& entry : packages.entries()) {
    PW_ASSIGN(profile.packages[entry.key], yaml::read_string(source, entry.value, packages.path_of(entry.key)));
  }

  PW_ASSIGN(auto key_node, top.required("key"));
  PW_ASSIGN(auto key, Map::read(source, key_node, "key",
                                {"device_id", "revision", "ip_version", "feature_table", "workaround_table"}));
  PW_ASSIGN(profile.device_id, sourced_string(key, "device_id", "0x[0-9a-f]{4}", "\"0x\" and 4 lowercase hex digits"));
  PW_ASSIGN(profile.revision, sourced_string(key, "revision", "0x[0-9a-f]{2}", "\"0x\" and 2 lowercase hex digits"));
  PW_ASSIGN(profile.ip_version, sourced_string(key, "ip_version", "[0-9]+\\.[0-9]+\\.[0-9]+", "ARCH.RELEASE.REVISION"));
  PW_ASSIGN(profile.feature_table, sourced_string(key, "feature_table", "virtual-device|([0-9a-f]{2}\\.){8}",
                                                  "virtual-device or 8 bytes as \"xx.\""));
  PW_ASSIGN(profile.workaround_table, sourced_string(key, "workaround_table", "virtual-device|([0-9a-f]{2}\\.){4}",
                                                     "virtual-device or 4 bytes as \"xx.\""));

  PW_ASSIGN(auto opencl_node, top.required("opencl"));
  PW_ASSIGN(auto opencl, Map::read(source, opencl_node, "opencl", {"bindless", "extensions"}));
  PW_ASSIGN(profile.opencl_bindless, sourced_bool(opencl, "bindless"));
  PW_ASSIGN(auto extensions_node, opencl.required("extensions"));
  PW_ASSIGN(auto extensions, Map::read(source, extensions_node, opencl.path_of("extensions"), {"add", "measured"}));
  PW_ASSIGN(profile.opencl_extensions_added, read_added_extensions(extensions));
  if (extensions.get("measured")) {
    PW_ASSIGN(profile.opencl_extensions_measured, sourced_string(extensions, "measured"));
  }

  PW_ASSIGN(auto level_zero_node, top.required("level_zero"));
  PW_ASSIGN(auto level_zero, Map::read(source, level_zero_node, "level_zero", {"bindless"}));
  PW_ASSIGN(profile.level_zero_bindless, sourced_bool(level_zero, "bindless"));

  PW_ASSIGN(profile.device_name, sourced_string(top, "device_name"));

  if (auto unknown_node = top.get("unknown")) {
    PW_ASSIGN(auto items, yaml::read_list(source, *unknown_node, "unknown", yaml::Emptiness::allowed));
    for (std::size_t i = 0; i < items.size(); ++i) {
      PW_ASSIGN(auto map, Map::read(source, items[i], yaml::index_path("unknown", i), {"field", "why"}));
      UnknownValue unknown;
      PW_ASSIGN(unknown.field, required_string(map, "field"));
      PW_ASSIGN(unknown.why, required_string(map, "why"));
      profile.unknown.push_back(std::move(unknown));
    }
  }
  return profile;
}

} // namespace

Result<IntelProfile>
parse_intel_profile(std::string_view text, std::string source_name)
{
  const Source source{std::move(source_name)};
  PW_ASSIGN(auto root, yaml::load(source, text));
  return read_profile(source, root);
}

Result<IntelProfile>
load_intel_profile(const std::filesystem::path& file)
{
  PW_ASSIGN_CTX(auto text, fmt::format("reading Intel key profile {}", file.string()),
                read_file(file.string(), 1 << 20));
  return parse_intel_profile(text, file.string());
}

Result<std::optional<IntelProfile>>
embedded_intel_profile(std::string_view target)
{
  const auto name = fmt::format("{}.yaml", target);
  const auto text = find_embedded(manifests::embedded_files(), name);
  if (!text) {
    return std::optional<IntelProfile>{};
  }
  PW_ASSIGN(auto profile, parse_intel_profile(*text, fmt::format("<embedded intel-profiles/{}>", name)));
  if (profile.target != target) {
    return fail(Errc::internal, fmt::format("intel-profiles/{} names target {}", name, profile.target));
  }
  return std::optional(std::move(profile));
}

} // namespace prewarm::manifest
