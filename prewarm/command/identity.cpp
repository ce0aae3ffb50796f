// SPDX-License-Identifier: Apache-2.0
#include "command/identity.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"
#include "command/kind_builder_rules.hpp"
#include "host/framework_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <sstream>

namespace prewarm::command {

namespace {

using bundle::CacheKind;
using bundle::Requirement;

bool
is_dotted_version(std::string_view token)
{
  if (token.empty() || token.front() == '.' || token.back() == '.') {
    return false;
  }
  bool dot = false;
  for (const char c : token) {
    if (c == '.') {
      dot = true;
    } else if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
      return false;
    }
  }
  return dot;
}

} // namespace

KindIdentity
identify_kind(CacheKind kind, const IdentityFacts& facts, FrameworkRequirements frameworks)
{
  KindIdentity identity;
  identity.kind = kind;
  builder_rules_of(kind).require(identity, facts, frameworks);
  std::sort(identity.requirements.begin(), identity.requirements.end());
  return identity;
}

std::vector<bundle::Requirement>
merge_requirements(const std::vector<KindIdentity>& kinds)
{
  std::vector<Requirement> merged;
  for (const auto& k : kinds) {
    merged.insert(merged.end(), k.requirements.begin(), k.requirements.end());
  }
  std::sort(merged.begin(), merged.end());
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  return merged;
}

std::optional<std::string>
parse_nvidia_proc_version(std::string_view text)
{
  const auto line_end = text.find('\n');
  const auto first_line = text.substr(0, line_end);
  if (first_line.find("NVRM version:") == std::string_view::npos) {
    return std::nullopt;
  }
  std::istringstream words{std::string(first_line)};
  std::string word;
  while (words >> word) {
    if (is_dotted_version(word)) {
      return word;
    }
  }
  return std::nullopt;
}

std::vector<DeviceProperties>
parse_nvidia_smi_csv(std::string_view text)
{
  std::vector<DeviceProperties> gpus;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    // The name comes last and may hold commas of its own.
    for (int i = 0; i < 3; ++i) {
      const auto comma = line.find(',', start);
      if (comma == std::string::npos) {
        break;
      }
      fields.emplace_back(trim(std::string_view(line).substr(start, comma - start)));
      start = comma + 1;
    }
    if (fields.size() != 3) {
      continue;
    }
    fields.emplace_back(trim(std::string_view(line).substr(start)));
    DeviceProperties gpu;
    gpu.emplace(prop::vendor, "nvidia");
    if (is_dotted_version(fields[0])) {
      gpu.emplace(prop::nvidia_driver, fields[0]);
    }
    // compute_cap "9.0" -> "90" (major*10 + minor, the vocabulary's form).
    if (const auto dot = fields[1].find('.'); dot != std::string::npos && is_dotted_version(fields[1])) {
      const int major = std::stoi(fields[1].substr(0, dot));
      const int minor = std::stoi(fields[1].substr(dot + 1));
      gpu.emplace(prop::nvidia_sm, std::to_string(major * 10 + minor));
    }
    // pci.device_id "0x233010DE": device id in the high 16 bits, vendor below.
    std::string pci = fields[2];
    std::transform(pci.begin(), pci.end(), pci.begin(), [](unsigned char c) { return std::tolower(c); });
    if (pci.size() == 10 && pci.starts_with("0x") && pci.ends_with("10de")) {
      gpu.emplace(prop::pci_id, "0x" + pci.substr(2, 4));
    }
    if (!fields[3].empty()) {
      gpu.emplace("nvidia.name", fields[3]); // informational; not a requirement key
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::vector<DeviceProperties>
probe_nvidia_gpus()
{
  std::optional<std::string> proc_driver;
  // /proc files report size 0: read as a stream, not with read_file().
  if (std::ifstream in("/proc/driver/nvidia/version"); in) {
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    proc_driver = parse_nvidia_proc_version(text);
  }
  SubprocessSpec spec;
  spec.argv = {"nvidia-smi", "--query-gpu=driver_version,compute_cap,pci.device_id,name",
               "--format=csv,noheader"};
  spec.environment = inherited_environment();
  spec.timeout = std::chrono::seconds(30);
  spec.kill_grace = std::chrono::seconds(2);
  std::vector<DeviceProperties> gpus;
  if (auto run = run_subprocess(spec); run && run->succeeded()) {
    gpus = parse_nvidia_smi_csv(run->output_tail);
  } else if (run) {
    log::verbose("nvidia-smi {}: no GPU details", run->describe(spec.timeout));
  } else if (proc_driver) {
    log::verbose("nvidia-smi: {}; using /proc/driver/nvidia/version only", run.error().message());
  }
  if (proc_driver) {
    if (gpus.empty()) {
      gpus.push_back(DeviceProperties{{std::string(prop::vendor), "nvidia"},
                                      {std::string(prop::nvidia_driver), *proc_driver}});
    }
    for (auto& gpu : gpus) {
      // The kernel module's version is what a container shares with its host.
      gpu[std::string(prop::nvidia_driver)] = *proc_driver;
    }
  }
  return gpus;
}

ProbedFrameworks
probe_frameworks(const std::string& python, const Environment& environment,
                 const std::filesystem::path& working_directory, std::vector<std::string>& warnings)
{
  SubprocessSpec spec;
  spec.argv = {python, "-c", std::string(host::framework_version_script())};
  spec.environment = environment;
  spec.working_directory = working_directory;
  spec.timeout = std::chrono::seconds(120);
  spec.kill_grace = std::chrono::seconds(2);
  auto run = run_subprocess(spec);
  if (!run) {
    warnings.push_back(fmt::format("framework probe: {}", run.error().message()));
    return {};
  }
  if (!run->succeeded()) {
    warnings.push_back(fmt::format("framework probe `{} -c ...` {}", python, run->describe(spec.timeout)));
  }
  return {host::parse_framework_versions(run->output_tail), host::parse_site_packages(run->output_tail)};
}

} // namespace prewarm::command
