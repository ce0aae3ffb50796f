// SPDX-License-Identifier: Apache-2.0
#include "manifest/target_registry.hpp"

#include "base/files.hpp"
#include "manifest/embedded_manifests.hpp"
#include "manifest/suggest.hpp"
#include "manifest/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
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
                                       "pci_revision"}));
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
  PW_TRY(only_for("ocloc_device", Vendor::intel));
  PW_TRY(only_for("ip_version", Vendor::intel));
  PW_TRY(only_for("pci_revision", Vendor::intel));
  if (auto node = map.get("pci_ids"); node && target.vendor == Vendor::cpu) {
    return fail(yaml::error_at(source, node->Mark(), map.path_of("pci_ids"), "a cpu target has no PCI ids"));
  }

  if (target.vendor == Vendor::nvidia) {
    PW_ASSIGN(auto sm_node, map.required("sm"));
    PW_ASSIGN(auto sm, yaml::read_integer(source, sm_node, map.path_of("sm"), 10, 999));
    target.sm = static_cast<int>(sm);
  }
  if (target.vendor == Vendor::intel) {
    PW_ASSIGN(auto ocloc_node, map.required("ocloc_device"));
    PW_ASSIGN(target.ocloc_device, yaml::read_string(source, ocloc_node, map.path_of("ocloc_device")));
    static const std::regex pci_id_like("0[xX][0-9a-fA-F]+");
    if (std::regex_match(target.ocloc_device, pci_id_like)) {
      return fail(yaml::error_at(source, ocloc_node.Mark(), map.path_of("ocloc_device"),
                                 fmt::format("'{}' is a PCI id: ocloc compiles a bare PCI id for the A0 stepping "
                                             "(0x56a5 -> dg2-g11-a0); name the acronym with its stepping "
                                             "(acm-g11 = dg2-g11-b1)",
                                             target.ocloc_device)));
    }
    if (auto node = map.get("pci_revision")) {
      PW_ASSIGN(target.pci_revision, yaml::read_string(source, *node, map.path_of("pci_revision")));
      static const std::regex revision("0x[0-9a-f]{2}");
      if (!std::regex_match(target.pci_revision, revision)) {
        return fail(yaml::error_at(source, node->Mark(), map.path_of("pci_revision"),
                                   fmt::format("a PCI revision is \"0x\" and 2 lowercase hex digits, got '{}'",
                                               target.pci_revision)));
      }
    }
    if (auto node = map.get("ip_version")) {
      PW_ASSIGN(target.ip_version, yaml::read_string(source, *node, map.path_of("ip_version")));
      static const std::regex version("[0-9]+\\.[0-9]+\\.[0-9]+");
      if (!std::regex_match(target.ip_version, version)) {
        return fail(yaml::error_at(source, node->Mark(), map.path_of("ip_version"),
                                   fmt::format("expected MAJOR.MINOR.REVISION, got '{}'", target.ip_version)));
      }
    }
  }
  if (auto node = map.get("pci_ids")) {
    PW_ASSIGN(target.pci_ids, yaml::read_unique_strings(source, *node, map.path_of("pci_ids")));
    static const std::regex pci("0x[0-9a-f]{4}");
    for (std::size_t i = 0; i < target.pci_ids.size(); ++i) {
      if (!std::regex_match(target.pci_ids[i], pci)) {
        return fail(yaml::error_at(source, std::as_const(*node)[i].Mark(), yaml::index_path(map.path_of("pci_ids"), i),
                                   fmt::format("a PCI id is \"0x\" and 4 lowercase hex digits, got '{}'",
                                               target.pci_ids[i])));
      }
    }
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
