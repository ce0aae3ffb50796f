// SPDX-License-Identifier: Apache-2.0
#include "manifest/target_registry.hpp"

#include "base/files.hpp"
#include "manifest/embedded_manifests.hpp"
#include "manifest/suggest.hpp"
#include "manifest/yaml_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <regex>
#include <utility>

namespace prewarm::manifest {

std::string_view
to_string(Vendor vendor)
{
  switch (vendor) {
  case Vendor::cpu:
    return "cpu";
  case Vendor::nvidia:
    return "nvidia";
  case Vendor::intel:
    return "intel";
  }
  return "?";
}

namespace {

bool
valid_target_name(std::string_view name)
{
  static const std::regex pattern("[a-z0-9][a-z0-9.-]{0,63}");
  return std::regex_match(name.begin(), name.end(), pattern);
}

Result<Vendor>
read_vendor(const yaml::Source& source, const YAML::Node& node, const std::string& path)
{
  PW_ASSIGN(auto text, yaml::read_string(source, node, path));
  static const std::vector<std::string> names{"cpu", "nvidia", "intel"};
  if (text == "cpu") {
    return Vendor::cpu;
  }
  if (text == "nvidia") {
    return Vendor::nvidia;
  }
  if (text == "intel") {
    return Vendor::intel;
  }
  return fail(yaml::error_at(source, node.Mark(), path,
                             fmt::format("unknown vendor '{}' (known: cpu, nvidia, intel){}", text,
                                         did_you_mean(text, names))));
}

Result<std::string>
read_matching(const yaml::Map& map, std::string_view key, const std::regex& pattern, std::string_view expected)
{
  const auto node = map.get(key);
  if (!node) {
    return std::string();
  }
  PW_ASSIGN(auto text, yaml::read_string(map.source(), *node, map.path_of(key)));
  if (!std::regex_match(text, pattern)) {
    return fail(
      yaml::error_at(map.source(), node->Mark(), map.path_of(key), fmt::format("{}, got '{}'", expected, text)));
  }
  return text;
}

Result<std::vector<std::string>>
read_pci_ids(const yaml::Map& map)
{
  const auto node = map.get("pci_ids");
  if (!node) {
    return std::vector<std::string>{};
  }
  PW_ASSIGN(auto ids, yaml::read_unique_strings(map.source(), *node, map.path_of("pci_ids")));
  static const std::regex pci("0x[0-9a-f]{4}");
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!std::regex_match(ids[i], pci)) {
      return fail(yaml::error_at(map.source(), std::as_const(*node)[i].Mark(),
                                 yaml::index_path(map.path_of("pci_ids"), i),
                                 fmt::format("a PCI id is \"0x\" and 4 lowercase hex digits, got '{}'", ids[i])));
    }
  }
  return ids;
}

// device_names: {PCI id: name}: each id one of the target's pci_ids, so a
// name cannot outlive the id it was recorded for.
Result<std::map<std::string, std::string>>
read_device_names(const yaml::Map& map, const std::vector<std::string>& pci_ids)
{
  std::map<std::string, std::string> names;
  const auto node = map.get("device_names");
  if (!node) {
    return names;
  }
  PW_ASSIGN(auto by_id, yaml::Map::read_any_keys(map.source(), *node, map.path_of("device_names")));
  for (const auto& entry : by_id.entries()) {
    if (std::ranges::find(pci_ids, entry.key) == pci_ids.end()) {
      return fail(yaml::error_at(
        map.source(), entry.key_node.Mark(), by_id.path_of(entry.key),
        fmt::format("'{}' is not one of this target's pci_ids ({})", entry.key, fmt::join(pci_ids, ", "))));
    }
    PW_ASSIGN(names[entry.key], yaml::read_string(map.source(), entry.value, by_id.path_of(entry.key)));
  }
  return names;
}

Status
read_intel_fields(const yaml::Map& map, Target& target)
{
  PW_ASSIGN(auto ocloc_node, map.required("ocloc_device"));
  PW_ASSIGN(target.ocloc_device, yaml::read_string(map.source(), ocloc_node, map.path_of("ocloc_device")));
  static const std::regex pci_id_like("0[xX][0-9a-fA-F]+");
  if (std::regex_match(target.ocloc_device, pci_id_like)) {
    return fail(yaml::error_at(map.source(), ocloc_node.Mark(), map.path_of("ocloc_device"),
                               fmt::format("'{}' is a PCI id: ocloc compiles a bare PCI id for the A0 stepping "
                                           "(0x56a5 -> dg2-g11-a0); name the acronym with its stepping "
                                           "(acm-g11 = dg2-g11-b1)",
                                           target.ocloc_device)));
  }
  static const std::regex revision("0x[0-9a-f]{2}");
  PW_ASSIGN(target.pci_revision,
            read_matching(map, "pci_revision", revision, "a PCI revision is \"0x\" and 2 lowercase hex digits"));
  static const std::regex version("[0-9]+\\.[0-9]+\\.[0-9]+");
  PW_ASSIGN(target.ip_version, read_matching(map, "ip_version", version, "expected MAJOR.MINOR.REVISION"));
  PW_ASSIGN(target.device_names, read_device_names(map, target.pci_ids));
  return {};
}

Result<Target>
read_target(const yaml::Source& source, const yaml::Map::Entry& entry, const std::string& path)
{
  Target target;
  target.name = entry.key;
  if (!valid_target_name(target.name)) {
    return fail(yaml::error_at(source, entry.key_node.Mark(), path,
                               "a target name is lowercase letters, digits, '.' and '-'"));
  }
  PW_ASSIGN(auto map, yaml::Map::read(source, entry.value, path,
                                      {"vendor", "description", "sm", "ocloc_device", "ip_version", "pci_ids",
                                       "pci_revision", "device_names"}));
  PW_ASSIGN(auto vendor_node, map.required("vendor"));
  PW_ASSIGN(target.vendor, read_vendor(source, vendor_node, map.path_of("vendor")));
  PW_ASSIGN(auto description_node, map.required("description"));
  PW_ASSIGN(target.description, yaml::read_string(source, description_node, map.path_of("description")));

  // Fields that belong to one vendor only are errors on the others: a cpu
  // entry with an sm is a mistake, not something to ignore.
  const auto only_for = [&](std::string_view key, Vendor owner) -> Status {
    if (auto node = map.get(key); node && target.vendor != owner) {
      return fail(yaml::error_at(source, node->Mark(), map.path_of(key),
                                 fmt::format("'{}' applies to vendor {} only, this target is {}", key,
                                             to_string(owner), to_string(target.vendor))));
    }
    return {};
  };
  PW_TRY(only_for("sm", Vendor::nvidia));
  for (const auto* key : {"ocloc_device", "ip_version", "pci_revision", "device_names"}) {
    PW_TRY(only_for(key, Vendor::intel));
  }
  if (auto node = map.get("pci_ids"); node && target.vendor == Vendor::cpu) {
    return fail(yaml::error_at(source, node->Mark(), map.path_of("pci_ids"), "a cpu target has no PCI ids"));
  }
  PW_ASSIGN(target.pci_ids, read_pci_ids(map));
  if (target.vendor == Vendor::nvidia) {
    PW_ASSIGN(auto sm_node, map.required("sm"));
    PW_ASSIGN(auto sm, yaml::read_integer(source, sm_node, map.path_of("sm"), 10, 999));
    target.sm = static_cast<int>(sm);
  }
  if (target.vendor == Vendor::intel) {
    PW_TRY(read_intel_fields(map, target));
  }
  return target;
}

} // namespace

Result<TargetRegistry>
TargetRegistry::parse(std::string_view text, std::string source_name)
{
  const yaml::Source source{std::move(source_name)};
  PW_ASSIGN(auto root, yaml::load(source, text));
  PW_ASSIGN(auto top, yaml::Map::read(source, root, "", {"version", "targets"}));
  PW_ASSIGN(auto version_node, top.required("version"));
  PW_TRY(yaml::read_integer(source, version_node, "version", 1, 1));
  PW_ASSIGN(auto targets_node, top.required("targets"));
  PW_ASSIGN(auto targets, yaml::Map::read_any_keys(source, targets_node, "targets"));
  if (targets.entries().empty()) {
    return fail(yaml::error_at(source, targets_node.Mark(), "targets", "the registry lists no targets"));
  }
  TargetRegistry registry;
  registry.m_source_name = source.name;
  for (const auto& entry : targets.entries()) {
    PW_ASSIGN(auto target, read_target(source, entry, targets.path_of(entry.key)));
    registry.m_targets.push_back(std::move(target));
  }
  return registry;
}

Result<TargetRegistry>
TargetRegistry::load_file(const std::filesystem::path& path)
{
  PW_ASSIGN_CTX(auto text, fmt::format("reading target registry {}", path.string()), read_file(path.string(), 4 << 20));
  return parse(text, path.string());
}

Result<TargetRegistry>
TargetRegistry::embedded()
{
  const auto text = find_embedded(manifests::embedded_files(), "targets.yaml");
  if (!text) {
    return fail(Errc::internal, "targets.yaml is not embedded in this binary");
  }
  return parse(*text, "<embedded targets.yaml>");
}

const Target*
TargetRegistry::find(std::string_view name) const
{
  const auto it = std::find_if(m_targets.begin(), m_targets.end(), [&](const Target& t) { return t.name == name; });
  return it == m_targets.end() ? nullptr : &*it;
}

std::vector<std::string>
TargetRegistry::names() const
{
  std::vector<std::string> names;
  for (const auto& t : m_targets) {
    names.push_back(t.name);
  }
  return names;
}

} // namespace prewarm::manifest
