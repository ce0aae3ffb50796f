// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/profile_measurement.hpp"

#include "base/device_properties.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "host/intel_compiler_identity.hpp"
#include "host/pci_probe.hpp"
#include "process/run.hpp"
#include "virtual_device/intel_root.hpp"
#include "virtual_device/neo_cache_key.hpp"
#include "virtual_device/virtual_device.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <ranges>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

namespace {

// The OpenCL build whose key NEO traces: no #include, so NEO hashes the
// source itself (compiler_interface.cpp direct mode), any device builds it.
constexpr std::string_view k_probe_kernel = "__kernel void prewarm_profile(__global int* x) { x[get_global_id(0)] = 1; }\n";

// NEO's debug keys that make the device a virtual one: a profile measured
// under them describes that virtual device, and says so.
constexpr std::string_view k_virtual_keys[] = {"SetCommandStreamReceiver", "ProductFamilyOverride", "ForceDeviceId",
                                               "OverrideRevision", "OverrideDeviceName"};

// Extensions a card lists and a virtual device cannot (no OS interface, no
// PCI address): the profile's `add`, for synthesis.
struct OsDependentExtension
{
  std::string_view name;
  manifest::AddedExtension::When when;
  std::string_view why;
};
constexpr OsDependentExtension k_os_dependent_extensions[] = {
  {"cl_intel_va_api_media_sharing", manifest::AddedExtension::When::libva,
   "listed where libva.so.2 loads (opencl/source/sharings/va/enable_va.cpp:60-66)"},
  {"cl_khr_pci_bus_info", manifest::AddedExtension::When::always,
   "listed when the PCI address parses, never on a virtual device (cl_device_caps.cpp:170-183)"},
};

// How the tools reach the driver being measured.
struct Driver
{
  std::optional<IntelRoot> root;

  std::vector<std::string> argv(const fs::path& tool) const
  {
    // A card: as the card host's applications see its libraries (libva
    // decides a listed extension). A virtual device (NEO's debug keys set):
    // as prewarm's virtual devices run, pinned (intel_root.hpp).
    const bool on_virtual_device = std::ranges::any_of(
      k_virtual_keys, [](std::string_view key) { return std::getenv(std::string(key).c_str()) != nullptr; });
    const auto libraries = on_virtual_device ? IntelRoot::HostLibraries::pinned : IntelRoot::HostLibraries::as_host;
    return root ? root->command(tool, {}, libraries) : std::vector<std::string>{tool.string()};
  }
};

// The user's environment (a card needs nothing more; a virtual device's keys
// pass through and are named in the sources), with NEO's cache traced into
// `neo_cache`.
Result<process::Environment>
traced_environment(const Driver& driver, const fs::path& neo_cache, const fs::path& work)
{
  auto environment = process::inherited_environment();
  // Any IGC_* variable turns NEO's cache off (default_cache_config.cpp:38-43):
  // nothing would be traced.
  std::erase_if(environment, [](const auto& entry) { return entry.first.starts_with("IGC_"); });
  if (driver.root) {
    PW_ASSIGN(const auto icd, driver.root->opencl_environment(work / "vendors"));
    for (const auto& [name, value] : icd) {
      environment.insert_or_assign(name, value);
    }
    environment.insert_or_assign("ZE_ENABLE_ALT_DRIVERS", driver.root->level_zero_driver().string());
    environment.erase("LD_LIBRARY_PATH");
  }
  environment.insert_or_assign("NEOReadDebugKeys", "1");
  environment.insert_or_assign("BinaryCacheTrace", "1");
  environment.insert_or_assign("NEO_CACHE_DIR", neo_cache.string());
  environment.insert_or_assign("NEO_CACHE_PERSISTENT", "1");
  environment.insert_or_assign("NEO_CACHE_MAX_SIZE", "0");
  std::error_code ec;
  fs::create_directories(neo_cache, ec); // NEO disables a cache whose directory is missing
  if (ec) {
    return fail(Errc::failed, fmt::format("creating {}: {}", neo_cache.string(), ec.message()));
  }
  return environment;
}

// Runs a tool; its stdout, or why it failed (with the end of its output).
Result<std::string>
run_tool(const Driver& driver, const fs::path& tool, std::vector<std::string> arguments,
         process::Environment environment, const fs::path& work, std::chrono::seconds timeout)
{
  process::Spec spec;
  spec.argv = driver.argv(tool);
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.environment = std::move(environment);
  spec.working_directory = work;
  spec.stderr_to = process::StderrTo::output; // a failure's output says why (no device, the build log)
  process::Supervision supervision;
  supervision.timeout = timeout;
  supervision.max_output = std::size_t{1} << 20;
  auto outcome = process::run(spec, supervision);
  if (!outcome) {
    return fail(Errc::failed, outcome.error().describe(spec), "E_INTEL_PROFILE");
  }
  if (!outcome->succeeded()) {
    const auto& o = outcome->output;
    return fail(Errc::failed,
                fmt::format("{} {}: {}", tool.filename().string(), outcome->describe(timeout),
                            o.size() > 1000 ? "..." + o.substr(o.size() - 1000) : o),
                "E_INTEL_PROFILE");
  }
  return std::move(outcome->output);
}

// NEO's trace spelling of a table's packed bytes: "b3.39.0f.".
template<std::size_t N>
std::string
table_text(const std::array<std::uint8_t, N>& bytes)
{
  std::string out;
  for (const auto b : bytes) {
    out += fmt::format("{:02x}.", b);
  }
  return out;
}

std::vector<std::string>
words(std::string_view text)
{
  std::vector<std::string> out;
  for (const auto word : std::views::split(text, ' ')) {
    if (!word.empty()) {
      out.emplace_back(word.begin(), word.end());
    }
  }
  return out;
}

// YAML's double-quoted scalar (JSON's string syntax, for printable text).
std::string
yaml_quoted(std::string_view text)
{
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// "<version>" dpkg lists for a package, or why there is none.
std::pair<std::string, std::string>
dpkg_version(const std::string& package)
{
  process::Spec spec;
  spec.argv = {"dpkg-query", "-W", "-f=${Version}", package};
  spec.stderr_to = process::StderrTo::null;
  process::Supervision supervision;
  supervision.timeout = std::chrono::seconds(10);
  const auto outcome = process::run(spec, supervision);
  if (!outcome) {
    return {{}, "no dpkg-query on this machine: record the version its package manager installed"};
  }
  if (!outcome->succeeded() || outcome->output.empty()) {
    return {{}, fmt::format("dpkg lists no {} (installed otherwise, or not at all)", package)};
  }
  return {outcome->output, {}};
}

} // namespace

namespace {

// What one measurement read from the driver: an OpenCL build and a Level
// Zero build, each traced by NEO, on the first GPU.
struct Measured
{
  Driver driver;
  ReplayResult device;                      // prewarm-cl-replay's device line
  const manifest::Target* target = nullptr; // the registry's, for the PCI id or --target
  std::optional<neo::IpVersion> ip;         // CL_DEVICE_IP_VERSION_INTEL
  neo::TracedEntry cl_entry;                // NEO's trace of the OpenCL build
  Result<std::vector<neo::TracedEntry>> ze_entries = std::vector<neo::TracedEntry>{};
};

const manifest::Target*
target_of(const manifest::TargetRegistry& registry, const manifest::Target* named, const ReplayResult& device)
{
  if (named != nullptr) {
    return named;
  }
  for (const auto& t : registry.targets()) {
    if (t.vendor == manifest::Vendor::intel && std::ranges::find(t.pci_ids, device.device_id) != t.pci_ids.end()) {
      return &t;
    }
  }
  return nullptr;
}

// The two traced builds: OpenCL (required) and Level Zero (a machine with
// OpenCL alone still gets a profile: the Level Zero inputs are then unknown).
Result<Measured>
measure(const ProfileRequest& request, const manifest::TargetRegistry& registry, const TempDir& work)
{
  Measured m;
  if (request.driver_root) {
    PW_ASSIGN(auto root, IntelRoot::at(*request.driver_root));
    m.driver.root.emplace(std::move(root));
  }
  const manifest::Target* named = nullptr;
  if (!request.target.empty()) {
    named = registry.find(request.target);
    if (named == nullptr || named->vendor != manifest::Vendor::intel) {
      return fail(Errc::usage, fmt::format("--target {}: not an Intel target of the registry {} (`prewarm "
                                           "targets` lists them)",
                                           request.target, registry.source_name()));
    }
  }
  PW_ASSIGN(const auto cl_tool, locate_replay_tool());
  PW_ASSIGN(const auto ze_tool, locate_ze_probe_tool());
  PW_TRY(write_file_atomic(work.path() / "prewarm_profile.cl", k_probe_kernel, 0644, Durability::none));
  PW_TRY(write_file_atomic(work.path() / "programs.list", "prewarm_profile.cl\t\n", 0644, Durability::none));
  const auto cl_cache = work.path() / "opencl-cache";
  PW_ASSIGN(auto cl_environment, traced_environment(m.driver, cl_cache, work.path()));
  PW_ASSIGN(auto cl_output,
            run_tool(m.driver, cl_tool, {"programs.list"}, std::move(cl_environment), work.path(), request.timeout));
  m.device = read_replay_output(std::move(cl_output));
  if (m.device.device_name.empty() || m.device.built != 1) {
    return fail(Errc::failed, fmt::format("Intel's OpenCL driver built nothing on the first GPU: {}", m.device.output),
                "E_INTEL_PROFILE");
  }
  m.target = target_of(registry, named, m.device);
  if (m.target == nullptr) {
    return fail(Errc::usage,
                fmt::format("no Intel target of the registry {} lists PCI id {} ({}): name one with --target",
                            registry.source_name(), m.device.device_id, m.device.device_name));
  }
  auto ip = neo::IpVersion::parse(m.device.ip_version);
  m.ip = ip ? std::optional(*ip) : std::nullopt;
  PW_ASSIGN(const auto cl_entries, neo::read_traced_entries(cl_cache, m.ip.value_or(neo::IpVersion{})));
  if (cl_entries.size() != 1) {
    return fail(Errc::failed, fmt::format("NEO traced {} OpenCL entries for one build", cl_entries.size()),
                "E_INTEL_PROFILE");
  }
  m.cl_entry = cl_entries.front();
  const auto ze_cache = work.path() / "level-zero-cache";
  PW_ASSIGN(auto ze_environment, traced_environment(m.driver, ze_cache, work.path()));
  auto ze_output = run_tool(m.driver, ze_tool, {}, std::move(ze_environment), work.path(), request.timeout);
  m.ze_entries = ze_output ? neo::read_traced_entries(ze_cache, m.ip.value_or(neo::IpVersion{}))
                           : Result<std::vector<neo::TracedEntry>>(std::unexpected(ze_output.error()));
  return m;
}

// Warnings where the measurement contradicts itself: NEO hashed another IGC
// than the loader finds, or its two traces differ beyond the program.
void
check(const Measured& m)
{
  const auto& cl_key = m.cl_entry.inputs;
  const char* library_path = std::getenv("LD_LIBRARY_PATH");
  const auto library = m.driver.root ? std::optional(m.driver.root->igc_library())
                                     : host::find_igc_library(library_path != nullptr ? library_path : "");
  const auto hashed = fmt::format("{}:{}", cl_key.igc_lib_size, cl_key.igc_lib_mtime);
  if (const auto identity = library ? host::igc_identity_of(*library) : std::nullopt; identity && *identity != hashed) {
    log::warn("{} is {} (size:mtime) but NEO hashed {}: NEO loaded another libigc.so.2 than the one this "
              "machine's loader finds first",
              library->string(), *identity, hashed);
  }
  if (!m.ze_entries || m.ze_entries->size() != 1) {
    return;
  }
  const auto& ze_key = m.ze_entries->front().inputs;
  auto same_program = cl_key;
  same_program.input = ze_key.input;
  same_program.options = ze_key.options;
  same_program.internal_options = ze_key.internal_options;
  same_program.spec_ids = ze_key.spec_ids;
  same_program.spec_values = ze_key.spec_values;
  if (const auto differs = neo::first_difference(ze_key, same_program); !differs.empty()) {
    log::warn("NEO's Level Zero trace differs from its OpenCL trace in {}", differs);
  }
}

// "measured on <device> (PCI ..., kernel driver ...) by prewarm intel-profile",
// or the virtual device's debug keys; and the kernel driver's name.
std::pair<std::string, std::string>
measured_on(const ProfileRequest& request, const ReplayResult& device)
{
  std::vector<std::string> debug_keys;
  for (const auto key : k_virtual_keys) {
    if (const char* value = std::getenv(std::string(key).c_str()); value != nullptr) {
      debug_keys.push_back(fmt::format("{}={}", key, value));
    }
  }
  const auto pci_devices = host::scan_pci_display_devices(request.sys_root);
  const auto pci = std::ranges::find_if(pci_devices, [&](const host::PciDisplayDevice& d) {
    return d.vendor_id == "0x8086" && d.device_id == device.device_id;
  });
  const bool on_pci = pci != pci_devices.end();
  const auto kmd = on_pci && !pci->kernel_driver.empty() ? pci->kernel_driver : std::string();
  if (!debug_keys.empty()) {
    return {fmt::format("measured on {} (a virtual device: NEO debug keys {}) by prewarm intel-profile",
                        device.device_name, fmt::join(debug_keys, " ")),
            kmd};
  }
  return {fmt::format("measured on {} ({}{}) by prewarm intel-profile", device.device_name,
                      on_pci ? "PCI " + pci->address : "no PCI function of that id",
                      kmd.empty() ? "" : ", kernel driver " + kmd),
          kmd};
}

// The PCI revision: sysfs where the card is a PCI function here, else NEO's trace.
manifest::ProfileValue
revision_of(const ProfileRequest& request, const Measured& m, std::string_view on)
{
  const auto pci_devices = host::scan_pci_display_devices(request.sys_root);
  const auto pci = std::ranges::find_if(pci_devices, [&](const host::PciDisplayDevice& d) {
    return d.vendor_id == "0x8086" && d.device_id == m.device.device_id;
  });
  if (pci != pci_devices.end() && !pci->revision.empty()) {
    return {pci->revision, fmt::format("{}: sysfs {}/revision", on, pci->address)};
  }
  return {fmt::format("0x{:02x}", m.cl_entry.inputs.platform.revision),
          fmt::format("{}: NEO's key trace, usRevId (no PCI function of that id here)", on)};
}

void
assemble_key(manifest::IntelProfile& profile, const Measured& m, std::string_view on)
{
  const auto measured = [&](std::string value, std::string_view how) {
    return manifest::ProfileValue{std::move(value), fmt::format("{}: {}", on, how)};
  };
  const auto& cl_key = m.cl_entry.inputs;
  profile.device_id = measured(m.device.device_id, "CL_DEVICE_ID_INTEL");
  if (m.ip) {
    // The IP version NEO hashes is not in its trace: confirmed by recomputing the entry's name with it.
    const bool confirmed = neo::cached_file_name(cl_key) == m.cl_entry.name;
    profile.ip_version = measured(m.device.ip_version, confirmed ? "CL_DEVICE_IP_VERSION_INTEL; NEO's entry name "
                                                                   "recomputed with it is the name NEO wrote"
                                                                 : "CL_DEVICE_IP_VERSION_INTEL");
    if (!confirmed) {
      profile.unknown.push_back({"key.ip_version",
                                 "NEO's entry name recomputed with CL_DEVICE_IP_VERSION_INTEL is not the name NEO "
                                 "wrote: the IP version NEO hashed differs, or another key input is not traced"});
    }
  } else {
    profile.ip_version = {"0.0.0", "not reported (no CL_DEVICE_IP_VERSION_INTEL)"};
    profile.unknown.push_back({"key.ip_version", "the driver reports no CL_DEVICE_IP_VERSION_INTEL"});
  }
  profile.feature_table = measured(table_text(cl_key.feature_table), "NEO's key trace");
  profile.workaround_table = measured(table_text(cl_key.workaround_table), "NEO's key trace");
}

void
assemble_apis(manifest::IntelProfile& profile, const Measured& m, std::string_view on)
{
  profile.opencl_bindless = {m.cl_entry.inputs.internal_options.find("-cl-intel-use-bindless-mode") !=
                               std::string::npos,
                             fmt::format("{}: NEO's internal options of an OpenCL build", on)};
  const auto extensions = words(m.device.extensions);
  for (const auto& [name, when, why] : k_os_dependent_extensions) {
    const auto at = std::ranges::find(extensions, name);
    if (at == extensions.end()) {
      continue;
    }
    profile.opencl_extensions_added.push_back(
      {std::string(name), at + 1 == extensions.end() || at == extensions.begin() ? "end" : *(at - 1), when,
       fmt::format("{}: listed in CL_DEVICE_EXTENSIONS; {}", on, why)});
  }
  profile.opencl_extensions_measured =
    manifest::ProfileValue{fmt::format("{}", fmt::join(extensions, " ")), fmt::format("{}: CL_DEVICE_EXTENSIONS", on)};
  profile.device_name =
    manifest::ProfileValue{m.device.device_name, fmt::format("{}: CL_DEVICE_NAME (SYCL's cache keys it)", on)};
  if (m.ze_entries && m.ze_entries->size() == 1) {
    const auto& ze_key = m.ze_entries->front().inputs;
    profile.level_zero_bindless = {ze_key.internal_options.find("-cl-intel-use-bindless-mode") != std::string::npos,
                                   fmt::format("{}: NEO's internal options of a Level Zero build", on)};
  } else {
    profile.level_zero_bindless = {false, "not measured"};
    profile.unknown.push_back(
      {"level_zero.bindless",
       fmt::format("the Level Zero build was not traced: {}",
                   m.ze_entries ? fmt::format("{} entries", m.ze_entries->size()) : m.ze_entries.error().message())});
  }
}

void
assemble_packages(manifest::IntelProfile& profile, const Measured& m, std::string_view on)
{
  for (const std::string package : {"libigc2", "intel-opencl-icd", "libze-intel-gpu1"}) {
    std::string version;
    std::string why;
    if (m.driver.root) {
      version = m.driver.root->package_version(package);
      why = fmt::format("{}/.complete lists no {}", m.driver.root->dir().string(), package);
    } else {
      std::tie(version, why) = dpkg_version(package);
    }
    if (version.empty()) {
      profile.unknown.push_back({"driver.packages." + package, why});
    } else {
      profile.packages[package] = version;
    }
  }
  profile.packages_source = fmt::format("{}: {}; NEO hashes libigc.so.2's size and mtime ({}:{}), so a host must "
                                        "carry these exact builds",
                                        on, m.driver.root ? m.driver.root->dir().string() + "/.complete" : "dpkg-query",
                                        m.cl_entry.inputs.igc_lib_size, m.cl_entry.inputs.igc_lib_mtime);
}

// The profile from what was measured, each value with its source.
manifest::IntelProfile
assemble(const ProfileRequest& request, const Measured& m)
{
  const auto [on, kmd] = measured_on(request, m.device);
  manifest::IntelProfile profile;
  profile.source_name = "prewarm intel-profile";
  profile.target = m.target->name;
  profile.recorder_product = m.target->ocloc_device;
  profile.recorder_device_id = m.device.device_id;
  profile.revision = revision_of(request, m, on);
  assemble_key(profile, m, on);
  assemble_apis(profile, m, on);
  assemble_packages(profile, m, on);
  if (!kmd.empty()) {
    profile.ip_version.source += fmt::format(" (kernel driver {})", kmd);
  }
  return profile;
}

} // namespace

Result<manifest::IntelProfile>
measure_intel_profile(const ProfileRequest& request, const manifest::TargetRegistry& registry)
{
  PW_ASSIGN(const auto work, TempDir::create("prewarm-intel-profile-"));
  PW_ASSIGN(const auto measured, measure(request, registry, work));
  check(measured);
  return assemble(request, measured);
}

std::string
format_intel_profile(const manifest::IntelProfile& p, std::string_view header)
{
  std::string out;
  for (const auto line : std::views::split(header, '\n')) {
    out += fmt::format("# {}\n", std::string_view(line.begin(), line.end()));
  }
  const auto value = [&](std::string_view indent, std::string_view key, std::string_view text, std::string_view source) {
    out += fmt::format("{}{}:\n{}  value: {}\n{}  source: {}\n", indent, key, indent, text, indent, yaml_quoted(source));
  };
  out += fmt::format("version: 1\ntarget: {}\nrecorder:\n  product: {}\n  device_id: {}\n", yaml_quoted(p.target),
                     yaml_quoted(p.recorder_product), yaml_quoted(p.recorder_device_id));
  out += "driver:\n  packages:";
  out += p.packages.empty() ? " {}\n" : "\n";
  for (const auto& [package, version] : p.packages) {
    out += fmt::format("    {}: {}\n", package, yaml_quoted(version));
  }
  out += fmt::format("  source: {}\nkey:\n", yaml_quoted(p.packages_source));
  value("  ", "device_id", yaml_quoted(p.device_id.value), p.device_id.source);
  value("  ", "revision", yaml_quoted(p.revision.value), p.revision.source);
  value("  ", "ip_version", yaml_quoted(p.ip_version.value), p.ip_version.source);
  value("  ", "feature_table", yaml_quoted(p.feature_table.value), p.feature_table.source);
  value("  ", "workaround_table", yaml_quoted(p.workaround_table.value), p.workaround_table.source);
  out += "opencl:\n";
  value("  ", "bindless", p.opencl_bindless.value ? "true" : "false", p.opencl_bindless.source);
  out += "  extensions:\n    add:";
  out += p.opencl_extensions_added.empty() ? " []\n" : "\n";
  for (const auto& added : p.opencl_extensions_added) {
    out += fmt::format("      - name: {}\n        after: {}\n        when: {}\n        source: {}\n", added.name,
                       added.after, added.when == manifest::AddedExtension::When::libva ? "libva" : "always",
                       yaml_quoted(added.source));
  }
  if (p.opencl_extensions_measured) {
    value("    ", "measured", yaml_quoted(p.opencl_extensions_measured->value), p.opencl_extensions_measured->source);
  }
  out += "level_zero:\n";
  value("  ", "bindless", p.level_zero_bindless.value ? "true" : "false", p.level_zero_bindless.source);
  value("", "device_name", yaml_quoted(p.device_name.value), p.device_name.source);
  if (!p.unknown.empty()) {
    out += "unknown:\n";
    for (const auto& u : p.unknown) {
      out += fmt::format("  - field: {}\n    why: {}\n", yaml_quoted(u.field), yaml_quoted(u.why));
    }
  }
  return out;
}

} // namespace prewarm::virtual_device
