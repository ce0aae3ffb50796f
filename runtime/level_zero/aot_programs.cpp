// SPDX-License-Identifier: Apache-2.0
#include "level_zero/aot_programs.hpp"

#include "base/digest.hpp"
#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <system_error>

namespace prewarm::level_zero {

namespace fs = std::filesystem;

namespace {

std::string
escape(std::string_view value)
{
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string
join(const std::vector<std::string>& items)
{
  std::string out;
  for (const auto& i : items) {
    out += (out.empty() ? "" : ",") + i;
  }
  return out;
}

} // namespace

std::string
AotTarget::to_text() const
{
  return fmt::format("format {}\nvendor intel\nocloc-device {}\nip-version {}\ncompiler {}\npci-ids {}\n",
                     k_aot_format, escape(ocloc_device), escape(ip_version), escape(compiler), join(pci_ids));
}

Result<AotTarget>
AotTarget::parse(std::string_view text)
{
  static constexpr std::string_view k_names[] = {"format", "vendor", "ocloc-device", "ip-version", "compiler",
                                                 "pci-ids"};
  std::vector<std::string> values;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) {
      return fail(Errc::verify, "AOT target record: last line has no newline", "E_AOT_TARGET");
    }
    const auto line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    if (line_number >= std::size(k_names)) {
      return fail(Errc::verify, fmt::format("AOT target record: unexpected line {}", in_quotes(line)),
                  "E_AOT_TARGET");
    }
    const auto& name = k_names[line_number++];
    if (!line.starts_with(name) || line.size() <= name.size() + 1 || line[name.size()] != ' ') {
      return fail(Errc::verify, fmt::format("AOT target record line {}: expected \"{} VALUE\", got {}",
                                            line_number, name, in_quotes(line)),
                  "E_AOT_TARGET");
    }
    values.emplace_back(line.substr(name.size() + 1));
  }
  if (values.size() != std::size(k_names)) {
    return fail(Errc::verify, fmt::format("AOT target record has {} lines, expected {}", values.size(),
                                          std::size(k_names)),
                "E_AOT_TARGET");
  }
  if (values[0] != std::to_string(k_aot_format) || values[1] != "intel") {
    return fail(Errc::verify, fmt::format("AOT target record: format {} vendor {} not understood (format {} intel)",
                                          values[0], values[1], k_aot_format),
                "E_AOT_TARGET");
  }
  AotTarget target;
  target.ocloc_device = values[2];
  target.ip_version = values[3];
  target.compiler = values[4];
  std::string_view ids = values[5];
  while (!ids.empty()) {
    const auto comma = ids.find(',');
    target.pci_ids.emplace_back(ids.substr(0, comma));
    ids = comma == std::string_view::npos ? std::string_view{} : ids.substr(comma + 1);
  }
  return target;
}

AotProgramKey
AotProgramKey::for_target(const AotTarget& target, std::string_view source, std::string_view options)
{
  return AotProgramKey{.source_sha256 = sha256_hex(source),
                       .options = std::string(options),
                       .ocloc_device = target.ocloc_device,
                       .ip_version = target.ip_version,
                       .compiler = target.compiler};
}

std::string
AotProgramKey::canonical_text() const
{
  return fmt::format("format {}\nkind aot\nsource-sha256 {}\noptions {}\nvendor intel\nocloc-device {}\n"
                     "ip-version {}\ncompiler {}\n",
                     k_aot_format, source_sha256, escape(options), escape(ocloc_device), escape(ip_version),
                     escape(compiler));
}

std::string
AotProgramKey::digest() const
{
  return sha256_hex(canonical_text());
}

Result<AotPrograms>
AotPrograms::open(const fs::path& programs_dir)
{
  AotPrograms programs;
  const fs::path root = programs_dir / k_aot_directory;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return programs;
  }
  // Two levels, <ocloc-device>/target.*, in sorted order (the walk's): a
  // link at either level is neither a target directory nor a record.
  std::vector<std::pair<fs::path, fs::path>> records; // (its directory, the record)
  PW_TRY(for_each_entry(root, [&](const TreeEntry& entry) -> Result<WalkNext> {
    const auto dir = parent_of(entry.relative);
    if (dir.empty()) {
      return entry.is_directory() ? WalkNext::descend : WalkNext::skip;
    }
    if (entry.is_regular_file() && entry.name.starts_with("target.")) {
      records.emplace_back(root / dir, root / entry.relative);
    }
    return WalkNext::skip;
  }));
  for (const auto& [dir, record] : records) {
    PW_ASSIGN_CTX(auto text, record.string(), read_file(record.string(), 64 * 1024));
    PW_ASSIGN_CTX(auto target, record.string(), AotTarget::parse(text));
    if (target.ocloc_device != dir.filename().string()) {
      return fail(Errc::verify,
                  fmt::format("{}: names ocloc-device {} but lies in {}", record.string(), target.ocloc_device,
                              in_quotes(dir.filename().string())),
                  "E_AOT_TARGET");
    }
    target.dir = dir;
    programs.m_targets.push_back(std::move(target));
  }
  return programs;
}

std::string
unpadded_release(std::string_view version)
{
  std::string out;
  while (true) {
    const auto dot = version.find('.');
    auto part = version.substr(0, dot);
    while (part.size() > 1 && part.front() == '0' && part.find_first_not_of("0123456789") == std::string_view::npos) {
      part.remove_prefix(1);
    }
    out += part;
    if (dot == std::string_view::npos) {
      return out;
    }
    out += '.';
    version.remove_prefix(dot + 1);
  }
}

namespace {

// The last dot-separated number, unpadded ("26.27.039122" -> "39122").
std::string
build_of(std::string_view version)
{
  const auto unpadded = unpadded_release(version);
  const auto dot = unpadded.rfind('.');
  return dot == std::string::npos ? unpadded : unpadded.substr(dot + 1);
}

} // namespace

bool
is_level_zero_driver_version(std::string_view version)
{
  int major = 0;
  const auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), major);
  return ec == std::errc() && end != version.data() + version.size() && *end == '.' && major < 19;
}

std::vector<std::string>
release_spellings(std::string_view release)
{
  std::vector<std::string> out{std::string(release)};
  if (const auto unpadded = unpadded_release(release); unpadded != release) {
    out.push_back(unpadded);
  }
  if (!is_level_zero_driver_version(release) && std::ranges::count(release, '.') >= 2) {
    out.push_back("1.3." + build_of(release));
  }
  return out;
}

bool
same_release(std::string_view a, std::string_view b)
{
  if (is_level_zero_driver_version(a) != is_level_zero_driver_version(b)) {
    return build_of(a) == build_of(b);
  }
  return unpadded_release(a) == unpadded_release(b);
}

namespace {

// Which zebin a device's driver loads is the driver's rule: a binary built
// for one IP version (product config: architecture.release.revision, the
// revision being the stepping) loads on a device of that IP version, and on
// the devices NEO lists as compatible (compute-runtime
// third_party/aot_config_headers/platforms.h compatibilityMapping, checked by
// zebin_decoder.cpp isTargetProductConfigCompatibleWithProductConfig, since
// 24.26). Not the reverse: an mtl-h binary does not load on MTL-U.
struct LoadsAlsoOn
{
  std::string_view binary;
  std::array<std::string_view, 2> devices;
};
constexpr std::array<LoadsAlsoOn, 4> k_loads_also_on{{
  {"12.55.8", {"12.56.5", "12.57.0"}}, // dg2-g10-c0 -> dg2-g11-b1, dg2-g12-a0
  {"20.1.0", {"20.2.0", "20.4.4"}},    // bmg-g21 -> bmg-g31, lnl-b0
  {"12.70.4", {"12.71.4", {}}},        // mtl-u-b0 -> mtl-h-b0
  {"30.0.4", {"30.1.0", {}}},          // ptl-h-b0 -> ptl-u
}};

// The compiler's release, "24.26.30049" -> 2426; 0 when unreadable.
int
release_of(std::string_view version)
{
  int major = 0;
  int minor = 0;
  const auto dot = version.find('.');
  if (dot == std::string_view::npos) {
    return 0;
  }
  const auto rest = version.substr(dot + 1);
  if (std::from_chars(version.data(), version.data() + dot, major).ec != std::errc() ||
      std::from_chars(rest.data(), rest.data() + rest.size(), minor).ec != std::errc()) {
    return 0;
  }
  return major * 100 + minor;
}

bool
loads_on(const AotTarget& target, std::string_view device_ip)
{
  if (release_of(target.compiler) < 2426) { // the mapping came with NEO 24.26
    return false;
  }
  for (const auto& rule : k_loads_also_on) {
    if (rule.binary == target.ip_version && std::ranges::find(rule.devices, device_ip) != rule.devices.end()) {
      return true;
    }
  }
  return false;
}

} // namespace

bool
loads_also_on(std::string_view binary_ip, std::string_view compiler, std::string_view device_ip)
{
  AotTarget target;
  target.ip_version = std::string(binary_ip);
  target.compiler = std::string(compiler);
  return loads_on(target, device_ip);
}

AotSelection
AotPrograms::select(const DeviceProperties& device) const
{
  AotSelection selection;
  auto get = [&](std::string_view key) -> std::string {
    auto it = device.find(key);
    return it == device.end() ? std::string("unknown") : it->second;
  };
  if (m_targets.empty()) {
    selection.reason = "no AOT programs installed";
    return selection;
  }
  if (get(prop::vendor) != "intel") {
    selection.reason = fmt::format("device vendor is {}, AOT programs are for Intel GPUs", get(prop::vendor));
    return selection;
  }
  const auto pci = get(prop::pci_id);
  const auto driver = get(prop::intel_driver);
  // Reported by the driver (CL_DEVICE_IP_VERSION_INTEL) where it can: it
  // tells the stepping, which the PCI id does not (0x56a5 is A0 or B1).
  const auto ip = get(prop::intel_ip_version);
  const auto driver_takes = [&](const AotTarget& target, std::string_view how) {
    if (driver != "unknown" && !same_release(driver, target.compiler)) {
      selection.reason = fmt::format("AOT target {} {} but was compiled by ocloc {} and the device's driver is {}",
                                     target.ocloc_device, how, target.compiler, driver);
      return false;
    }
    return true;
  };
  std::string names;
  // The binary made for this device first, then one the driver also loads.
  for (const auto& target : m_targets) {
    names += (names.empty() ? "" : ", ") + target.ocloc_device;
    if (std::ranges::find(target.pci_ids, pci) == target.pci_ids.end()) {
      continue;
    }
    if (ip != "unknown" && target.ip_version != "unknown" && ip != target.ip_version && !loads_on(target, ip)) {
      selection.reason = fmt::format("AOT target {} matches pci-id {} but is for IP {} and the device is IP {} "
                                     "(another stepping: its driver would not load the binary)",
                                     target.ocloc_device, pci, target.ip_version, ip);
      continue;
    }
    if (driver_takes(target, fmt::format("matches pci-id {}", pci))) {
      selection.target = &target;
      selection.reason.clear();
      return selection;
    }
  }
  if (ip != "unknown") {
    for (const auto& target : m_targets) {
      if ((target.ip_version == ip || loads_on(target, ip)) &&
          driver_takes(target, fmt::format("(IP {}) loads on this device's IP {}", target.ip_version, ip))) {
        selection.target = &target;
        selection.reason.clear();
        return selection;
      }
    }
  }
  if (selection.reason.empty()) {
    selection.reason = fmt::format("no AOT target lists pci-id {} (targets: {})", pci, names);
  }
  return selection;
}

AotLookup
AotPrograms::find(const AotTarget& target, std::string_view source, std::string_view options) const
{
  AotLookup lookup;
  const auto key = AotProgramKey::for_target(target, source, options);
  const auto digest = key.digest();
  const auto base = target.dir / digest;
  auto meta = read_file(base.string() + ".meta", 64 * 1024);
  if (!meta) {
    lookup.reason = fmt::format("no AOT program {} for {} (options {})", digest.substr(0, 12),
                                target.ocloc_device, in_quotes(options));
    return lookup;
  }
  if (*meta != key.canonical_text()) {
    lookup.reason = fmt::format("AOT program {}: its meta does not match the key", digest.substr(0, 12));
    return lookup;
  }
  auto zebin = read_file(base.string() + ".zebin");
  if (!zebin) {
    lookup.reason = fmt::format("AOT program {}: {}", digest.substr(0, 12), zebin.error().message());
    return lookup;
  }
  AotProgram program;
  program.key = digest;
  program.zebin = std::move(*zebin);
  if (auto spirv = read_file(base.string() + ".spv")) {
    program.spirv = std::move(*spirv);
  }
  lookup.program = std::move(program);
  return lookup;
}

std::string
AotPrograms::find_any_spirv(std::string_view source, std::string_view options) const
{
  for (const auto& target : m_targets) {
    const auto key = AotProgramKey::for_target(target, source, options);
    const auto base = (target.dir / key.digest()).string();
    auto meta = read_file(base + ".meta", 64 * 1024);
    if (meta && *meta == key.canonical_text()) {
      if (auto spirv = read_file(base + ".spv"); spirv && !spirv->empty()) {
        return std::move(*spirv);
      }
    }
  }
  return {};
}

} // namespace prewarm::level_zero
