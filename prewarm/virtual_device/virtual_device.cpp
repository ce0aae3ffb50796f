// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/virtual_device.hpp"

#include "base/device_properties.hpp"
#include "base/directory_tree.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "jobs/slice_identity.hpp"
#include "level_zero/aot_programs.hpp"
#include "process/run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <unistd.h>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

std::string
VirtualDevice::describe() const
{
  return fmt::format("{} {}", product, pci_id);
}

Result<VirtualDevice>
virtual_device_for(const manifest::Target& target, const manifest::IntelProfile* named)
{
  if (target.vendor != manifest::Vendor::intel || target.ocloc_device.empty()) {
    return fail(Errc::internal, fmt::format("a virtual device for non-Intel target {}", target.name));
  }
  if (target.pci_ids.empty()) {
    return fail(Errc::usage, fmt::format("{}: the registry lists no PCI id, and NEO's cache key hashes it (add "
                                         "pci_ids to the target)",
                                         target.name));
  }
  VirtualDevice device{target.ocloc_device, target.pci_ids.front(), {}};
  if (named != nullptr) {
    device.device_name = named->device_name.value;
  } else {
    PW_ASSIGN(const auto carried, manifest::embedded_intel_profile(target.name));
    const auto named_by_driver = target.device_names.find(device.pci_id);
    device.device_name = carried                                        ? carried->device_name.value
                         : named_by_driver != target.device_names.end() ? named_by_driver->second
                                                                        : std::string();
  }
  return device;
}

std::vector<bundle::Requirement>
neo_slice_requirements(std::string_view release, const TracedKey& key, const ReplayResult& device,
                       OpenclEntries opencl)
{
  std::vector<bundle::Requirement> out = {
    jobs::intel_driver_requirement(release),
    {std::string(prop::intel_igc), "==", key.igc_identity},
    {std::string(prop::pci_id), "==", key.device_id},
    {std::string(prop::pci_revision), "==", key.revision},
    {std::string(prop::vendor), "==", "intel"},
  };
  if (!device.ip_version.empty()) {
    out.push_back({std::string(prop::intel_ip_version), "==", device.ip_version});
  }
  if (opencl == OpenclEntries::present && !device.extensions.empty()) {
    out.push_back({std::string(prop::intel_opencl_extensions), "==", opencl_extensions_value(device.extensions)});
  }
  std::ranges::sort(out);
  return out;
}

process::Environment
virtual_device_variables(const VirtualDevice& device)
{
  auto id = device.pci_id.starts_with("0x") ? device.pci_id.substr(2) : device.pci_id;
  process::Environment variables = {
    {"NEOReadDebugKeys", "1"},      {"SetCommandStreamReceiver", "5"}, {"UseAubStream", "0"},
    {"HardwareInfoOverride", "1x5x4"}, {"UseBindlessMode", "0"},       {"ProductFamilyOverride", device.product},
    {"ForceDeviceId", id},
  };
  if (!device.device_name.empty()) {
    variables.insert_or_assign("OverrideDeviceName", device.device_name);
  }
  return variables;
}

namespace {

// Variables of ours that would steer the run elsewhere: another ICD or
// driver, another cache, a preloaded layer, the host's libraries.
bool
inherited_variable_kept(std::string_view name)
{
  for (const std::string_view prefix : {"NEO_", "OCL_ICD_", "OPENCL_", "ZE_", "SYCL_", "LD_", "POCL_"}) {
    if (name.starts_with(prefix)) {
      return false;
    }
  }
  return name != "BinaryCacheTrace" && name != "NEOReadDebugKeys";
}

std::vector<std::string>
split(std::string_view line, char separator)
{
  std::vector<std::string> out;
  while (true) {
    const auto at = line.find(separator);
    out.emplace_back(line.substr(0, at));
    if (at == std::string_view::npos) {
      return out;
    }
    line.remove_prefix(at + 1);
  }
}

std::string
lowercase(std::string text)
{
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

} // namespace

ReplayResult
read_replay_output(std::string output)
{
  ReplayResult result;
  result.output = std::move(output);
  for (const auto& line : split(result.output, '\n')) {
    const auto fields = split(line, '\t');
    if (fields[0] == "device" && fields.size() >= 4) {
      result.device_name = fields[1];
      result.driver_version = fields[2];
      result.device_id = fields[3];
      if (fields.size() == 6) {
        char* end = nullptr;
        const auto ip = std::strtoul(fields[4].c_str(), &end, 10);
        if (!fields[4].empty() && *end == '\0' && ip != 0) {
          result.ip_version = intel_ip_version_text(static_cast<unsigned>(ip));
        }
        result.extensions = fields[5];
      }
    } else if (fields[0] == "built" && fields.size() == 4) {
      ++result.built;
    } else if (fields[0] == "failed" && fields.size() == 4) {
      result.failed.push_back(fmt::format("{} [{}]: status {}", fs::path(fields[2]).filename().string(), fields[3],
                                          fields[1]));
    }
  }
  return result;
}

Result<ReplayResult>
replay_programs(const IntelRoot& root, const VirtualDevice& device, const std::vector<ReplayProgram>& programs,
                const ReplayRun& run)
{
  std::error_code ec;
  const auto sources = run.work_dir / "sources";
  fs::create_directories(sources, ec);
  fs::create_directories(run.neo_cache, ec); // NEO disables a cache whose directory is missing
  if (ec) {
    return fail(Errc::failed, fmt::format("creating {}: {}", run.neo_cache.string(), ec.message()));
  }
  std::string list;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const auto& p = programs[i];
    if (p.options.find_first_of("\t\n") != std::string::npos) {
      return fail(Errc::internal, fmt::format("{}: build options with a tab or newline", p.name));
    }
    // One file per program: the list maps a line to its file, and the
    // driver sees only the text, never the name.
    // Relative to the working directory: the directory replays anywhere
    // (the builder keeps a copy beside the job's log).
    const auto file = fs::path("sources") / fmt::format("{:04}-{}", i, p.name);
    PW_TRY(write_file_atomic(run.work_dir / file, p.source, 0644, Durability::none));
    list += fmt::format("{}\t{}\n", file.string(), p.options);
  }
  const auto list_file = run.work_dir / "programs.list";
  PW_TRY(write_file_atomic(list_file, list, 0644, Durability::none));

  process::Environment environment;
  for (auto& [name, value] : process::inherited_environment()) {
    if (inherited_variable_kept(name)) {
      environment.emplace(name, value);
    }
  }
  PW_ASSIGN(auto icd, root.opencl_environment(run.work_dir / "vendors"));
  environment.merge(icd);
  for (auto& [name, value] : virtual_device_variables(device)) {
    environment.insert_or_assign(name, value);
  }
  for (auto& [name, value] : run.debug_keys) {
    environment.insert_or_assign(name, value);
  }
  environment.insert_or_assign("NEO_CACHE_DIR", run.neo_cache.string());
  environment.insert_or_assign("NEO_CACHE_PERSISTENT", "1");
  environment.insert_or_assign("NEO_CACHE_MAX_SIZE", "0"); // no eviction while we fill it
  if (run.trace) {
    environment.insert_or_assign("BinaryCacheTrace", "1");
  }
  if (run.stats) {
    environment.insert_or_assign("NEO_CACHE_STATS", "1");
  }

  process::Spec spec;
  spec.argv = root.command(run.tool, {"programs.list"}, run.libraries);
  spec.environment = std::move(environment);
  spec.working_directory = run.work_dir;
  process::Supervision supervision;
  supervision.timeout = run.timeout;
  supervision.max_output = std::size_t{16} << 20;
  auto outcome = process::run(spec, supervision);
  if (!outcome) {
    return fail(Errc::failed, outcome.error().describe(spec), "E_VIRTUAL_DEVICE");
  }

  ReplayResult result = read_replay_output(std::move(outcome->output));
  result.seconds = std::chrono::duration<double>(outcome->duration).count();
  const auto tail = [&] {
    const auto& o = result.output;
    return o.size() > 2000 ? "..." + o.substr(o.size() - 2000) : o;
  };
  if (outcome->ending == process::Outcome::Ending::timed_out) {
    return fail(Errc::failed,
                fmt::format("virtual device {}: the program builds did not finish in {} s", device.describe(),
                            run.timeout.count()),
                "E_VIRTUAL_DEVICE");
  }
  if (result.device_name.empty() || (outcome->ending == process::Outcome::Ending::exited &&
                                     outcome->exit_status == 2)) {
    return fail(Errc::failed,
                fmt::format("virtual device {}: Intel's driver in {} showed no device: {}", device.describe(),
                            root.dir().string(), tail()),
                "E_VIRTUAL_DEVICE");
  }
  if (lowercase(result.device_id) != lowercase(device.pci_id)) {
    return fail(Errc::failed,
                fmt::format("virtual device {}: the driver posed as {} instead (ForceDeviceId not honoured)",
                            device.describe(), result.device_id.empty() ? "an unknown id" : result.device_id),
                "E_VIRTUAL_DEVICE");
  }
  if (outcome->ending != process::Outcome::Ending::exited ||
      (outcome->exit_status != 0 && result.failed.empty())) {
    return fail(Errc::failed,
                fmt::format("virtual device {}: the build tool ended abnormally (status {}, signal {}): {}",
                            device.describe(), outcome->exit_status, outcome->signal, tail()),
                "E_VIRTUAL_DEVICE");
  }
  return result;
}

Result<TracedKey>
read_traced_key(const fs::path& neo_cache)
{
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(neo_cache, ec)) {
    if (entry.path().extension() != ".trace") {
      continue;
    }
    PW_ASSIGN(const auto text, read_file(entry.path().string(), 16 << 20));
    std::map<std::string, std::string, std::less<>> values;
    for (const auto& line : split(text, '\n')) {
      const auto trimmed = std::string_view(line).substr(std::min(line.find_first_not_of(' '), line.size()));
      const auto equals = trimmed.find('=');
      if (equals != std::string_view::npos) {
        values.emplace(std::string(trimmed.substr(0, equals)), std::string(trimmed.substr(equals + 1)));
      }
    }
    const auto number = [&](std::string_view key) -> std::optional<unsigned long long> {
      const auto it = values.find(key);
      if (it == values.end() || it->second.empty()) {
        return std::nullopt;
      }
      char* end = nullptr;
      const auto value = std::strtoull(it->second.c_str(), &end, 10);
      return *end == '\0' ? std::optional(value) : std::nullopt;
    };
    const auto id = number("usDeviceID");
    const auto revision = number("usRevId");
    const auto size = number("libSize");
    const auto mtime = number("libMTime");
    if (!id || !revision || !size || !mtime) {
      return fail(Errc::failed,
                  fmt::format("{}: NEO's key trace lacks usDeviceID, usRevId, libSize or libMTime (a driver "
                              "whose trace format this prewarm does not know)",
                              entry.path().string()),
                  "E_VIRTUAL_DEVICE");
    }
    return TracedKey{fmt::format("0x{:04x}", *id), fmt::format("0x{:02x}", *revision),
                     fmt::format("{}:{}", *size, *mtime)};
  }
  return fail(Errc::failed,
              fmt::format("{}: NEO wrote no key trace (BinaryCacheTrace=1): its compiler cache is off or the "
                          "driver ignores its debug keys",
                          neo_cache.string()),
              "E_VIRTUAL_DEVICE");
}

Result<std::string>
checked_driver_release(const IntelRoot& root, const VirtualDevice& device, const ReplayResult& shown)
{
  PW_ASSIGN(auto driver, root.driver_release());
  if (shown.driver_version != driver) {
    return fail(Errc::failed,
                fmt::format("virtual device {}: the driver reports version {}, the Intel root {} lists {}",
                            device.describe(), shown.driver_version, root.dir().string(), driver),
                "E_VIRTUAL_DEVICE");
  }
  return driver;
}

std::optional<NeoCacheStats>
read_neo_cache_stats(const fs::path& neo_cache)
{
  std::ifstream in(neo_cache / "stats", std::ios::binary);
  std::uint64_t counters[2] = {};
  if (!in.read(reinterpret_cast<char*>(counters), sizeof counters)) {
    return std::nullopt;
  }
  return NeoCacheStats{counters[0], counters[1]};
}

std::vector<std::string>
neo_cache_entries(const fs::path& neo_cache)
{
  std::vector<std::string> out;
  // Best effort: what a tree that cannot be read (or is missing) holds is
  // what was listed so far.
  (void)for_each_entry(neo_cache, [&](const TreeEntry& entry) -> Result<WalkNext> {
    const auto extension = fs::path(entry.name).extension();
    if (entry.is_regular_file() && (extension == ".cl_cache" || extension == ".l0_cache")) {
      out.emplace_back(entry.relative);
    }
    return WalkNext::descend;
  });
  std::ranges::sort(out);
  return out;
}

namespace {

Result<fs::path>
locate_tool(std::string_view name, const std::string& variable)
{
  if (const char* configured = std::getenv(variable.c_str()); configured != nullptr && *configured != '\0') {
    if (::access(configured, X_OK) != 0) {
      return fail(Errc::usage, fmt::format("{}={}: not an executable file", variable, configured));
    }
    return fs::path(configured);
  }
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> looked;
  if (!ec) {
    // Installed: beside prewarm. Build tree: prewarm/cli/prewarm and
    // prewarm/virtual_device/prewarm-cl-replay.
    for (const auto& candidate : {self.parent_path() / name, self.parent_path().parent_path() / "virtual_device" / name}) {
      if (::access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
      looked.push_back(candidate.string());
    }
  }
  return fail(Errc::failed,
              fmt::format("{} not found (looked for {}, {} unset; install it beside prewarm, or set {})", name,
                          looked.empty() ? std::string("nothing: /proc/self/exe unreadable")
                                         : fmt::format("{}", fmt::join(looked, " and ")),
                          variable, variable),
              "E_VIRTUAL_DEVICE");
}

} // namespace

Result<fs::path>
locate_replay_tool()
{
  return locate_tool("prewarm-cl-replay", "PREWARM_CL_REPLAY");
}

Result<fs::path>
locate_ze_probe_tool()
{
  return locate_tool("prewarm-ze-probe-build", "PREWARM_ZE_PROBE_BUILD");
}

std::vector<std::string>
missing_build_helpers()
{
  std::vector<std::string> missing;
  if (!IntelRoot::locate()) {
    return missing; // no virtual device, so no job runs them
  }
  if (auto replay = locate_replay_tool(); !replay) {
    missing.push_back(replay.error().message());
  }
  return missing;
}

} // namespace prewarm::virtual_device
