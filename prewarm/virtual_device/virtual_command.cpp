// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/virtual_command.hpp"

#include "base/directory_tree.hpp"

#include "base/log.hpp"
#include "jobs/staged_kind.hpp"
#include "manifest/plan.hpp"
#include "process/run.hpp"
#include "virtual_device/neo_card_slice.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

namespace {

bool
names_kind(const manifest::ModelSpec& model, std::string_view kind)
{
  return model.command && std::ranges::find(model.command->kinds, kind) != model.command->kinds.end();
}

// Ours would steer the run elsewhere (another driver, cache, adapter or
// preloaded layer); the workload's own environment is added after.
bool
inherited_variable_kept(std::string_view name)
{
  for (const std::string_view prefix : {"NEO_", "OCL_ICD_", "OPENCL_", "ZE_", "SYCL_", "UR_", "ONEAPI_", "LD_",
                                        "POCL_", "PYTHON"}) {
    if (name.starts_with(prefix)) {
      return false;
    }
  }
  return name != "BinaryCacheTrace" && name != "NEOReadDebugKeys" && name != "OverrideDeviceName";
}

// argv[0] as the root's loader needs it: a path (the loader does no PATH
// search).
Result<fs::path>
resolve_program(const std::string& name, const std::map<std::string, std::string>& environment)
{
  if (name.find('/') != std::string::npos) {
    return fs::path(name);
  }
  std::string path;
  if (const auto it = environment.find("PATH"); it != environment.end()) {
    path = it->second;
  } else if (const char* inherited = std::getenv("PATH"); inherited != nullptr) {
    path = inherited;
  }
  std::string_view rest = path;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const auto dir = rest.substr(0, colon);
    const auto candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  }
  return fail(Errc::usage, fmt::format("the command's program {} is not in PATH", name), "E_VIRTUAL_DEVICE");
}

std::chrono::seconds
deadline_for(std::chrono::seconds workload_timeout)
{
  auto deadline = k_default_deadline;
  if (const char* text = std::getenv(std::string(k_deadline_variable).c_str()); text != nullptr && *text != '\0') {
    long value = 0;
    const auto [end, ec] = std::from_chars(text, text + std::strlen(text), value);
    if (ec == std::errc() && *end == '\0' && value > 0) {
      deadline = std::chrono::seconds(value);
    } else {
      log::warn("{}={}: not a positive number of seconds; using {} s", k_deadline_variable, text,
                k_default_deadline.count());
    }
  }
  return workload_timeout.count() > 0 ? std::min(deadline, workload_timeout) : deadline;
}

std::size_t
count_lines_containing(std::string_view text, std::string_view needle)
{
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

std::uint64_t
total_bytes(const fs::path& dir, const std::vector<std::string>& files)
{
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& f : files) {
    bytes += fs::file_size(dir / f, ec);
  }
  return bytes;
}

std::vector<std::string>
added(const std::vector<std::string>& after, const std::vector<std::string>& before)
{
  std::vector<std::string> out;
  std::ranges::set_difference(after, before, std::back_inserter(out));
  return out;
}

} // namespace

Result<CommandRunResult>
run_command(const IntelRoot& root, const VirtualDevice& device, const CommandRun& run)
{
  std::error_code ec;
  for (const auto& dir : {run.neo_cache, run.sycl_cache}) {
    fs::create_directories(dir, ec); // NEO disables a cache whose directory is missing
    if (ec) {
      return fail(Errc::failed, fmt::format("creating {}: {}", dir.string(), ec.message()));
    }
  }
  process::Environment environment;
  for (auto& [name, value] : process::inherited_environment()) {
    if (inherited_variable_kept(name)) {
      environment.emplace(name, value);
    }
  }
  for (const auto& [name, value] : run.environment) {
    environment.insert_or_assign(name, value);
  }
  PW_ASSIGN(auto icd, root.opencl_environment(run.vendors_dir));
  environment.merge(icd);
  for (auto& [name, value] : virtual_device_variables(device)) {
    environment.insert_or_assign(name, value);
  }
  environment.insert_or_assign("NEO_CACHE_DIR", run.neo_cache.string());
  environment.insert_or_assign("NEO_CACHE_PERSISTENT", "1");
  environment.insert_or_assign("NEO_CACHE_MAX_SIZE", "0");
  environment.insert_or_assign("SYCL_CACHE_DIR", run.sycl_cache.string());
  environment.insert_or_assign("SYCL_CACHE_PERSISTENT", "1");
  environment.insert_or_assign("UR_LOADER_USE_LEVEL_ZERO_V2", "0"); // see the header
  environment.insert_or_assign("SYCL_UR_USE_LEVEL_ZERO_V2", "0");
  environment.insert_or_assign("PREWARM_VIRTUAL_DEVICE", device.describe()); // a warm-up may skip its checks
  if (run.trace) {
    environment.insert_or_assign("BinaryCacheTrace", "1");
  }
  if (run.proof) {
    environment.insert_or_assign("NEO_CACHE_STATS", "1");
    environment.insert_or_assign("SYCL_CACHE_TRACE", "1");
  }

  process::Spec spec;
  spec.argv = root.command(run.argv.front(), {run.argv.begin() + 1, run.argv.end()});
  spec.environment = std::move(environment);
  spec.working_directory = run.working_directory;
  process::Supervision supervision;
  supervision.timeout = run.deadline;
  // Python ends on SIGTERM at once; a driver call may not: then SIGKILL.
  supervision.term_grace = std::chrono::seconds(5);
  supervision.max_output = std::size_t{64} << 20;
  auto outcome = process::run(spec, supervision);
  if (!outcome) {
    return fail(Errc::failed, outcome.error().describe(spec), "E_VIRTUAL_DEVICE");
  }
  if (!run.log_file.empty()) {
    std::ofstream log(run.log_file, std::ios::app);
    log << fmt::format("--- virtual device {}{}: {}\n", device.describe(), run.proof ? " (hit proof)" : "",
                       fmt::join(run.argv, " "))
        << outcome->output
        << fmt::format("--- {}\n", outcome->describe(std::chrono::duration_cast<std::chrono::milliseconds>(run.deadline)));
  }
  CommandRunResult result;
  result.deadline_reached = outcome->ending == process::Outcome::Ending::timed_out;
  result.ending = outcome->describe(std::chrono::duration_cast<std::chrono::milliseconds>(run.deadline));
  result.seconds = std::chrono::duration<double>(outcome->duration).count();
  result.sycl_hits = count_lines_containing(outcome->output, "[Persistent Cache]: using cached device binary");
  return result;
}

std::vector<std::string>
sycl_cache_items(const fs::path& sycl_cache)
{
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(sycl_cache, ec)) {
    return out;
  }
  // An unreadable cache lists what was read before the error: items missing
  // from the list are counted as missing, never as present.
  (void)for_each_entry(sycl_cache, [&](const TreeEntry& entry) -> Result<WalkNext> {
    if (entry.is_regular_file() && entry.name.ends_with(".bin")) {
      out.emplace_back(entry.relative);
    }
    return WalkNext::descend;
  });
  std::ranges::sort(out);
  return out;
}

std::size_t
drop_interrupted_sycl_items(const fs::path& sycl_cache)
{
  std::vector<fs::path> locks;
  std::error_code ec;
  if (fs::is_directory(sycl_cache, ec)) {
    (void)for_each_entry(sycl_cache, [&](const TreeEntry& entry) -> Result<WalkNext> {
      if (!entry.is_directory() && entry.name.ends_with(".lock")) {
        locks.push_back(sycl_cache / entry.relative);
      }
      return WalkNext::descend;
    });
  }
  for (const auto& lock : locks) {
    // <n>.lock guards <n>.bin, <n>.src and <n>_access_time.txt.
    const auto stem = lock.stem().string();
    for (const auto& suffix : {".bin", ".src", "_access_time.txt", ".lock"}) {
      fs::remove(lock.parent_path() / (stem + suffix), ec);
    }
  }
  return locks.size();
}

VirtualCommandExecutor::VirtualCommandExecutor()
{
  auto found = IntelRoot::locate();
  if (found) {
    m_root.emplace(std::move(*found));
  } else {
    log::verbose("virtual Intel devices not used for commands: {}", found.error().message());
  }
}

bool
VirtualCommandExecutor::handles(const manifest::Job& job, const manifest::ModelSpec& model) const
{
  return m_root.has_value() && job.strategy == manifest::Strategy::aot && manifest::runs_on_virtual_device(model);
}

Result<jobs::JobOutcome>
VirtualCommandExecutor::run(const jobs::JobContext& context)
{
  const auto started = std::chrono::steady_clock::now();
  const auto& workload = *context.model.command;
  if (workload.shell != manifest::ShellMode::direct) {
    return fail(Errc::usage,
                fmt::format("{}: a shell command cannot run on a virtual Intel device (the shell runs on this "
                            "host's loader, which cannot load the Intel root's driver); give argv directly",
                            context.job.id),
                "E_VIRTUAL_DEVICE");
  }
  PW_ASSIGN(const auto device, virtual_device_for(context.target, context.manifest.find_profile(context.target.name)));
  auto argv = workload.argv_for(context.job.precision);
  if (argv.empty()) {
    return fail(Errc::usage, fmt::format("{}: the command is empty", context.job.id));
  }
  PW_ASSIGN(const auto program, resolve_program(argv.front(), workload.env));
  argv.front() = program.string();
  const bool want_neo = names_kind(context.model, "neo");
  const bool want_sycl = names_kind(context.model, "sycl");

  CommandRun fill;
  fill.argv = argv;
  fill.working_directory = workload.cwd;
  fill.environment = workload.env;
  fill.neo_cache = context.work_dir / "neo-slice" / "neo";
  fill.sycl_cache = context.work_dir / "sycl-slice" / "sycl";
  fill.log_file = context.log_file_or("virtual-command.log");
  fill.vendors_dir = context.work_dir / "virtual-vendors";
  fill.deadline = deadline_for(workload.timeout);
  fill.trace = true;
  PW_ASSIGN(const auto filled, run_command(*m_root, device, fill));
  const auto interrupted = drop_interrupted_sycl_items(fill.sycl_cache);
  const auto neo_entries = neo_cache_entries(fill.neo_cache);
  const auto sycl_items = sycl_cache_items(fill.sycl_cache);
  if (neo_entries.empty() && sycl_items.empty()) {
    return fail(Errc::failed,
                fmt::format("{}: the command compiled nothing on the virtual device {} ({}; log: {})",
                            context.job.id, device.describe(), filled.ending, fill.log_file.string()),
                "E_VIRTUAL_DEVICE");
  }
  // The key inputs as NEO traced them (no trace without a NEO entry).
  std::optional<TracedKey> key;
  std::optional<CardEntries> card; // the entries a card looks up (neo_card_slice.hpp)
  if (!neo_entries.empty()) {
    PW_ASSIGN(auto traced, read_traced_key(fill.neo_cache));
    key = std::move(traced);
    PW_ASSIGN(card, synthesize_card_entries(*m_root, context.target, context.manifest.find_profile(context.target.name),
                                              fill.neo_cache, context.work_dir / "card-synthesis"));
  }
  PW_TRY(jobs::clean_staged_kind(bundle::CacheKind::neo, fill.neo_cache));
  PW_TRY(jobs::clean_staged_kind(bundle::CacheKind::sycl, fill.sycl_cache));

  // The hit proof, on copies: the staged files stay exactly what is packaged.
  CommandRun again = fill;
  again.neo_cache = context.work_dir / "virtual-proof" / "neo";
  again.sycl_cache = context.work_dir / "virtual-proof" / "sycl";
  again.trace = false;
  again.proof = true;
  std::error_code ec;
  fs::create_directories(again.neo_cache.parent_path(), ec);
  fs::copy(fill.neo_cache, again.neo_cache, fs::copy_options::recursive, ec);
  fs::copy(fill.sycl_cache, again.sycl_cache, fs::copy_options::recursive, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("copying the caches for the hit proof: {}", ec.message()));
  }
  PW_ASSIGN(const auto proved, run_command(*m_root, device, again));
  const auto stats = read_neo_cache_stats(again.neo_cache);
  const auto new_neo = added(neo_cache_entries(again.neo_cache), neo_entries);
  const auto new_sycl = added(sycl_cache_items(again.sycl_cache), sycl_items);
  PW_TRY(stage_card_entries(card, fill.neo_cache));

  const auto driver = m_root->package_version("intel-opencl-icd");
  jobs::JobOutcome outcome;
  const std::string device_text =
    key ? fmt::format("virtual {} {} rev {} ({})", device.product, key->device_id, key->revision,
                      m_root->dir().string())
        : fmt::format("virtual {} ({})", device.describe(), m_root->dir().string());
  // "26.27.39122.14-1" -> "26.27.039122", as ocloc and OpenCL spell it.
  std::string release;
  {
    unsigned major = 0, minor = 0, build = 0;
    if (std::sscanf(driver.c_str(), "%u.%u.%u", &major, &minor, &build) == 3) {
      release = fmt::format("{}.{}.{:06}", major, minor, build);
    }
  }
  if (release.empty()) {
    return fail(Errc::failed, fmt::format("{}: the Intel root lists no intel-opencl-icd version", context.job.id),
                "E_VIRTUAL_DEVICE");
  }
  if (want_neo && !neo_entries.empty()) {
    jobs::JobOutput neo;
    neo.staging_dir = fill.neo_cache.parent_path();
    // The device's IP version and extensions, which the trace does not print.
    PW_ASSIGN(const auto tool, locate_replay_tool());
    PW_ASSIGN(const auto probed, replay_programs(*m_root, device, {}, {tool, context.work_dir / "virtual-probe", context.work_dir / "virtual-probe" / "neo"}));
    const bool opencl = std::ranges::any_of(neo_entries, [](const auto& e) { return e.ends_with(".cl_cache"); });
    neo.requirements = neo_slice_requirements(release, *key, probed, opencl ? OpenclEntries::present : OpenclEntries::absent);
    PW_TRY(accept_card(neo.requirements, card, probed.extensions));
    outcome.outputs.push_back(std::move(neo));
  }
  if (want_sycl && !sycl_items.empty()) {
    // SYCL's own key holds the device name and the driver version: the
    // device name is what a host's probe reports (opencl.device).
    jobs::JobOutput sycl;
    sycl.staging_dir = fill.sycl_cache.parent_path();
    sycl.requirements = {
      driver_requirement(release),
      {"pci-id", "==", device.pci_id},
      {"vendor", "==", "intel"},
    };
    if (!device.device_name.empty()) {
      sycl.requirements.push_back({"opencl.device", "==", device.device_name});
    }
    std::ranges::sort(sycl.requirements);
    outcome.outputs.push_back(std::move(sycl));
  }
  if (outcome.outputs.empty()) {
    return fail(Errc::failed,
                fmt::format("{}: the command filled only caches of kinds it does not name (NEO entries {}, SYCL "
                            "items {})",
                            context.job.id, neo_entries.size(), sycl_items.size()),
                "E_VIRTUAL_DEVICE");
  }
  const auto neo_bytes = total_bytes(fill.neo_cache, neo_entries);
  const auto sycl_bytes = total_bytes(fill.sycl_cache, sycl_items);
  const auto proof = stats ? fmt::format("NEO {} hits, {} misses", stats->hits, stats->misses) : "no NEO statistics";
  outcome.device = device_text;
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  outcome.summary = fmt::format("virtual device: command {} in {:.1f} s{} -> NEO {} entries ({} bytes), SYCL {} "
                                "items ({} bytes); re-run: {}, SYCL {} loaded, {} new entries, {:.1f} s",
                                filled.ending, filled.seconds, filled.deadline_reached ? " (deadline: kept what it compiled)" : "",
                                neo_entries.size(), neo_bytes, sycl_items.size(), sycl_bytes, proof, proved.sycl_hits,
                                new_neo.size() + new_sycl.size(), proved.seconds);
  outcome.summary += want_neo && !neo_entries.empty() ? describe(card) : "";
  if (!new_neo.empty() || !new_sycl.empty()) {
    log::warn("{}: the re-run on the virtual device compiled anew ({} NEO, {} SYCL; first: {})", context.job.id,
              new_neo.size(), new_sycl.size(), new_neo.empty() ? new_sycl.front() : new_neo.front());
  }
  nlohmann::json json = {
    {"virtual_device", device.describe()},
    {"intel_root", m_root->dir().string()},
    {"driver", release},
    {"deadline_seconds", fill.deadline.count()},
    {"deadline_reached", filled.deadline_reached},
    {"ending", filled.ending},
    {"fill_seconds", filled.seconds},
    {"neo_entries", neo_entries.size()},
    {"neo_bytes", neo_bytes},
    {"sycl_items", sycl_items.size()},
    {"sycl_bytes", sycl_bytes},
    {"sycl_items_interrupted", interrupted},
    {"proof_seconds", proved.seconds},
    {"proof_sycl_loaded", proved.sycl_hits},
    {"proof_new_neo_entries", new_neo.size()},
    {"proof_new_sycl_items", new_sycl.size()},
    {"seconds", outcome.seconds},
  };
  if (key) {
    json["pci_id"] = key->device_id;
    json["pci_revision"] = key->revision;
    json["igc"] = key->igc_identity;
  }
  if (stats) {
    json["proof_neo_hits"] = stats->hits;
    json["proof_neo_misses"] = stats->misses;
  }
  outcome.report_json = json.dump();
  log::verbose("{}: {}", context.job.id, outcome.summary);
  return outcome;
}

} // namespace prewarm::virtual_device
