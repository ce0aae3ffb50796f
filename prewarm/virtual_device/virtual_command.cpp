// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/virtual_command.hpp"

#include "base/directory_tree.hpp"

#include "base/log.hpp"
#include "command/custom_capture.hpp"
#include "command/proof_rerun.hpp"
#include "manifest/plan.hpp"
#include "process/run.hpp"
#include "virtual_device/filled_caches.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <unistd.h>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

namespace {

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

VirtualCommandExecutor::VirtualCommandExecutor(unsigned compile_jobs) : m_compile_jobs(compile_jobs)
{
  auto found = IntelRoot::locate();
  if (found) {
    m_root.emplace(std::move(*found));
  } else {
    log::verbose("virtual Intel devices not used for commands: {}", found.error().message());
  }
}

namespace {

std::vector<command::CustomCacheRequest>
custom_requests(const manifest::CommandWorkload& workload)
{
  std::vector<command::CustomCacheRequest> out;
  for (const auto& cache : workload.caches) {
    out.push_back({cache.name, cache.variable, cache.subdir, cache.flag});
  }
  return out;
}

// Each custom cache's variable pointed at its directory under `root`
// (command::point_custom_variables(): a flag merged into the value).
void
point_custom_caches(std::map<std::string, std::string>& environment, const fs::path& root,
                    const std::vector<command::CustomCacheRequest>& caches)
{
  process::Environment pointed(environment.begin(), environment.end());
  for (const auto& problem : command::point_custom_variables(pointed, root, caches)) {
    log::warn("{}", problem);
  }
  environment.clear();
  environment.insert(pointed.begin(), pointed.end());
}

// A warm-up the deadline stopped is a verdict, not a success: NEO hits on
// what it built prove nothing about what it never reached (OpenVINO's GPU
// plugin spins in the driver after its 2 constant-folding kernels, and the
// network's own kernels are never built).
std::string
cut_off_verdict(const FilledCaches& filled, const CommandRun& fill, double seconds)
{
  return fmt::format("the warm-up did not finish: the deadline ({} s, {}) stopped it after {:.1f} s; kept what it "
                     "had built ({}); it probably missed every kernel it would have compiled after that point (on a "
                     "virtual device kernels never run, and a wait on a result never returns: build every kernel "
                     "before the first wait, or skip the wait when PREWARM_VIRTUAL_DEVICE is set); no hit proof "
                     "(it would stop at the same point and pay the deadline again)",
                     fill.deadline.count(), k_deadline_variable, seconds, filled.counts());
}

// What the fill amounts to: a warm-up cut off by the deadline, else the hit
// proof, a re-run on copies (command::rerun_on_copies) within the same deadline.
struct VirtualProof
{
  std::optional<std::string> verdict;        // why the job is not a plain success
  std::optional<audit::UsageReport> usage;   // when the proof ran
  CommandRunResult rerun;
  std::optional<NeoCacheStats> stats;
  std::vector<std::string> not_shipped; // kinds the re-run saw empty: the bundle does not ship them
};

// The re-run sees exactly the kinds the bundle ships, as a host that
// installed it would: a copy of each shipped cache, and an empty directory
// for NEO's or SYCL's cache when the model does not name its kind (a SYCL
// application's SYCL cache would otherwise answer for the NEO entries the
// bundle ships, proving nothing about them).
std::vector<command::ProofCache>
shipped_caches(const manifest::ModelSpec& model, const CommandRun& fill, const FilledCaches& filled,
               const fs::path& proof_dir, VirtualProof& judged)
{
  std::vector<command::ProofCache> caches;
  for (const auto& [kind, dir] : {std::pair{bundle::CacheKind::neo, fill.neo_cache}, {bundle::CacheKind::sycl, fill.sycl_cache}}) {
    const std::string name(bundle::to_string(kind));
    if (names_kind(model, kind)) {
      caches.push_back({name, dir, proof_dir / name});
    } else {
      judged.not_shipped.push_back(name);
    }
  }
  for (const auto& c : filled.custom) {
    caches.push_back({fmt::format("{}/{}", bundle::k_custom_kind, c.name()),
                      command::custom_staging_dir(filled.custom_root, c.name()),
                      command::custom_staging_dir(proof_dir, c.name())});
  }
  return caches;
}

Result<VirtualProof>
judge_fill(const IntelRoot& root, const VirtualDevice& device, const manifest::ModelSpec& model, const CommandRun& fill,
           const CommandRunResult& ran, const FilledCaches& filled,
           const std::vector<command::CustomCacheRequest>& custom, const fs::path& proof_dir,
           manifest::VerifyMode verify)
{
  VirtualProof judged;
  if (ran.deadline_reached) {
    judged.verdict = cut_off_verdict(filled, fill, ran.seconds);
    return judged;
  }
  if (verify == manifest::VerifyMode::off) {
    return judged;
  }
  const auto caches = shipped_caches(model, fill, filled, proof_dir, judged);
  const auto cache_of = [&](const command::ProofCopies& copies, const std::string& kind) {
    const auto copy = copies.dirs.find(kind);
    return copy != copies.dirs.end() ? copy->second : proof_dir / (kind + "-not-shipped");
  };
  PW_ASSIGN(auto usage, command::rerun_on_copies(caches, [&](const command::ProofCopies& copies) -> Status {
              CommandRun again = fill;
              again.neo_cache = cache_of(copies, "neo"); // run_command creates an empty one
              again.sycl_cache = cache_of(copies, "sycl");
              point_custom_caches(again.environment, proof_dir, custom);
              again.trace = false;
              again.proof = true;
              PW_ASSIGN(judged.rerun, run_command(root, device, again));
              return {};
            }));
  judged.stats = read_neo_cache_stats(proof_dir / (names_kind(model, bundle::CacheKind::neo) ? "neo" : "neo-not-shipped"));
  if (judged.rerun.deadline_reached) {
    judged.verdict = fmt::format("the hit proof did not finish: the re-run on the copies {}", judged.rerun.ending);
  } else if (const auto written = command::new_entries(usage); written > 0) {
    judged.verdict = fmt::format("the re-run on the virtual device compiled anew ({} new entries; first: {})",
                                 written, command::first_new_entry(usage).value_or(""));
  }
  judged.usage = std::move(usage);
  return judged;
}

// The job's line and its report (`prewarm build --json`).
void
describe_outcome(jobs::JobOutcome& outcome, const IntelRoot& root, const VirtualDevice& device,
                 const std::string& driver, const CommandRun& fill, const CommandRunResult& ran,
                 const FilledCaches& filled, const VirtualProof& judged)
{
  const auto neo_bytes = total_bytes(fill.neo_cache, filled.neo_entries);
  const auto sycl_bytes = total_bytes(fill.sycl_cache, filled.sycl_items);
  const auto* key = filled.recording ? &filled.recording->key() : nullptr;
  outcome.device = key != nullptr ? fmt::format("virtual {} {} rev {} ({})", device.product, key->device_id,
                                                key->revision, root.dir().string())
                                  : fmt::format("virtual {} ({})", device.describe(), root.dir().string());
  std::string custom_text;
  for (const auto& c : filled.custom) {
    custom_text += fmt::format(", custom/{} {} files ({} bytes)", c.name(), c.files, c.bytes);
  }
  std::string proof_text = "no hit proof (verify: off)";
  if (ran.deadline_reached) {
    proof_text = "no hit proof (the deadline stopped the warm-up)";
  } else if (judged.usage) {
    proof_text = fmt::format(
      "re-run as installed{}: {}, SYCL {} loaded, {} new entries, {:.1f} s",
      judged.not_shipped.empty() ? std::string()
                                 : fmt::format(" (not shipped, so empty: {})", fmt::join(judged.not_shipped, ", ")),
      judged.stats ? fmt::format("NEO {} hits, {} misses", judged.stats->hits, judged.stats->misses)
                   : std::string("no NEO statistics"),
      judged.rerun.sycl_hits, command::new_entries(*judged.usage), judged.rerun.seconds);
  }
  outcome.summary = fmt::format("virtual device: command {} in {:.1f} s{} -> NEO {} entries ({} bytes), SYCL {} "
                                "items ({} bytes){}; {}",
                                ran.ending, ran.seconds, ran.deadline_reached ? " (deadline: kept what it compiled)" : "",
                                filled.neo_entries.size(), neo_bytes, filled.sycl_items.size(), sycl_bytes, custom_text,
                                proof_text);
  nlohmann::json json = {
    {"virtual_device", device.describe()},
    {"intel_root", root.dir().string()},
    {"driver", driver},
    {"deadline_seconds", fill.deadline.count()},
    {"deadline_reached", ran.deadline_reached},
    {"ending", ran.ending},
    {"fill_seconds", ran.seconds},
    {"neo_entries", filled.neo_entries.size()},
    {"neo_bytes", neo_bytes},
    {"sycl_items", filled.sycl_items.size()},
    {"sycl_bytes", sycl_bytes},
    {"sycl_items_interrupted", filled.sycl_interrupted},
    {"seconds", outcome.seconds},
  };
  for (const auto& c : filled.custom) {
    json["custom"][c.name()] = {{"variable", c.request.variable}, {"files", c.files}, {"bytes", c.bytes}};
  }
  if (judged.verdict) {
    json["verdict"] = *judged.verdict;
  }
  // The entries a card looks up, made from this recording (neo_card_slice.hpp).
  json["card"] = filled.recording ? filled.recording->report() : nlohmann::json(nullptr);
  if (key != nullptr) {
    json["pci_id"] = key->device_id;
    json["pci_revision"] = key->revision;
    json["igc"] = key->igc_identity;
  }
  if (judged.usage) {
    json["proof_seconds"] = judged.rerun.seconds;
    json["proof_sycl_loaded"] = judged.rerun.sycl_hits;
    json["proof_new_neo_entries"] = command::new_entries(*judged.usage, "neo");
    json["proof_new_sycl_items"] = command::new_entries(*judged.usage, "sycl");
    json["proof_new_entries"] = command::new_entries(*judged.usage);
    json["proof_not_shipped"] = judged.not_shipped;
  }
  if (judged.stats) {
    json["proof_neo_hits"] = judged.stats->hits;
    json["proof_neo_misses"] = judged.stats->misses;
  }
  outcome.report_json = json.dump();
}

} // namespace

Result<jobs::JobOutcome>
VirtualCommandExecutor::run(const jobs::JobContext& context)
{
  const auto started = std::chrono::steady_clock::now();
  const auto& workload = *context.model.command;
  const auto& job_id = context.job.id;
  if (workload.shell != manifest::ShellMode::direct) {
    return fail(Errc::usage,
                fmt::format("{}: a shell command cannot run on a virtual Intel device (the shell runs on this "
                            "host's loader, which cannot load the Intel root's driver); give argv directly",
                            job_id),
                "E_VIRTUAL_DEVICE");
  }
  PW_ASSIGN(const auto target,
            resolve_intel_target(context.target, context.manifest.find_profile(context.target.name)));
  const auto& device = target.device;
  auto argv = workload.argv_for(context.job.precision);
  if (argv.empty()) {
    return fail(Errc::usage, fmt::format("{}: the command is empty", job_id));
  }
  PW_ASSIGN(const auto program, resolve_program(argv.front(), workload.env));
  argv.front() = program.string();
  PW_ASSIGN(const auto driver, m_root->driver_release());
  const auto custom = custom_requests(workload);
  const auto custom_root = context.work_dir / "custom-slice";
  PW_TRY(command::prepare_custom_staging(custom_root, custom));

  CommandRun fill;
  fill.argv = argv;
  fill.working_directory = workload.cwd;
  fill.environment = workload.env;
  point_custom_caches(fill.environment, custom_root, custom);
  fill.neo_cache = context.work_dir / "neo-slice" / "neo";
  fill.sycl_cache = context.work_dir / "sycl-slice" / "sycl";
  fill.log_file = context.log_file_or("virtual-command.log");
  fill.vendors_dir = context.work_dir / "virtual-vendors";
  fill.deadline = deadline_for(workload.timeout);
  fill.trace = true;
  PW_ASSIGN(const auto ran, run_command(*m_root, device, fill));
  std::vector<std::string> warnings;
  // Probed once, by the synthesis or the slices, whichever asks first.
  std::optional<ReplayResult> probed;
  const std::function<Result<ReplayResult>()> probe = [&]() -> Result<ReplayResult> {
    if (!probed) {
      PW_ASSIGN(const auto tool, locate_replay_tool());
      const auto probe_dir = context.work_dir / "virtual-probe";
      PW_ASSIGN(auto result, replay_programs(*m_root, device, {}, {tool, probe_dir, probe_dir / "neo"}));
      // The NEO slice requires the root's driver: the device must have run it.
      PW_TRY(checked_driver_release(*m_root, device, result));
      probed = std::move(result);
    }
    return *probed;
  };
  const CardSynthesis synthesis{*m_root, target, context.work_dir / "card-synthesis", m_compile_jobs, probe};
  PW_ASSIGN(auto filled, collect_filled(job_id, fill, custom_root, custom, synthesis, warnings));
  if (filled.empty()) {
    return fail(Errc::failed,
                fmt::format("{}: the command compiled nothing on the virtual device {} ({}; log: {})", job_id,
                            device.describe(), ran.ending, fill.log_file.string()),
                "E_VIRTUAL_DEVICE");
  }
  jobs::JobOutcome outcome;
  PW_ASSIGN(outcome.outputs, slices_of(filled, context.model, device, driver, probe));
  if (outcome.outputs.empty()) {
    return fail(Errc::failed,
                fmt::format("{}: the command filled only caches of kinds it does not name ({})", job_id,
                            filled.counts()),
                "E_VIRTUAL_DEVICE");
  }
  for (auto& output : outcome.outputs) {
    for (const auto& [name, value] : workload.runtime_env) {
      output.environment.push_back({name, value});
    }
  }

  PW_ASSIGN(const auto judged, judge_fill(*m_root, device, context.model, fill, ran, filled, custom,
                                          context.work_dir / "virtual-proof", workload.verify));
  if (judged.verdict && workload.verify == manifest::VerifyMode::require) {
    return fail(Errc::failed, fmt::format("job {}: verify: require, and {}", job_id, *judged.verdict));
  }
  if (judged.verdict) {
    log::warn("{}: {}", job_id, *judged.verdict);
  }
  // After the proof, which they would only confuse: the virtual device never looks them up.
  if (filled.recording) {
    PW_TRY(filled.recording->stage());
  }
  for (const auto& w : warnings) {
    log::warn("{}: {}", job_id, w);
  }

  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  describe_outcome(outcome, *m_root, device, driver, fill, ran, filled, judged);
  if (names_kind(context.model, bundle::CacheKind::neo) && !filled.neo_entries.empty()) {
    outcome.summary += filled.recording->describe();
  }
  log::verbose("{}: {}", job_id, outcome.summary);
  return outcome;
}

} // namespace prewarm::virtual_device
