// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/virtual_device_executor.hpp"

#include "aot/kernel_variants.hpp"
#include "base/embedded_file.hpp"
#include "base/log.hpp"
#include "command/proof_rerun.hpp"
#include "jobs/staged_kind.hpp"
#include "store/program_record.hpp"
#include "virtual_device/neo_card_slice.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <span>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files(); // prewarm_kernels (kernels/*.cl)
}

namespace prewarm::virtual_device {

namespace fs = std::filesystem;

namespace {

// The root and the build tool, or nothing (and why, once per executor).
void
locate_virtual_device(std::optional<IntelRoot>& root, fs::path& tool)
{
  auto found = IntelRoot::locate();
  if (!found) {
    log::verbose("virtual Intel devices not used: {}", found.error().message());
    return;
  }
  auto replay = locate_replay_tool();
  if (!replay) {
    log::warn("virtual Intel devices not used: {}", replay.error().message());
    return;
  }
  root.emplace(std::move(*found));
  tool = std::move(*replay);
}

// The AOT outcome with the NEO slice added.
jobs::JobOutcome
with_neo_slice(jobs::JobOutcome outcome, NeoSlice neo)
{
  outcome.outputs.push_back(std::move(neo.output));
  outcome.device = fmt::format("{}; {}", outcome.device, neo.device);
  outcome.summary = fmt::format("{}; {}", outcome.summary, neo.summary);
  auto json = outcome.report_json.empty() ? nlohmann::json::object() : nlohmann::json::parse(outcome.report_json);
  json["neo"] = nlohmann::json::parse(neo.report_json);
  outcome.report_json = json.dump();
  return outcome;
}

} // namespace

VirtualDeviceExecutor::VirtualDeviceExecutor(aot::AotExecutorOptions aot_options)
  : m_aot(aot_options), m_jobs(aot_options.jobs)
{
  locate_virtual_device(m_root, m_tool);
}

Result<NeoSlice>
make_neo_slice(const IntelRoot& root, const fs::path& tool, const jobs::JobContext& context, unsigned jobs)
{
  PW_ASSIGN(const auto variants, aot::job_variants(context));
  return make_neo_slice(root, tool, context, variants, jobs);
}

Result<NeoSlice>
make_neo_slice(const IntelRoot& root, const fs::path& tool, const jobs::JobContext& context,
               std::span<const aot::KernelVariant> variants, unsigned jobs)
{
  const auto sources = kernels::embedded_files();
  std::vector<ReplayProgram> programs;
  for (const auto& v : variants) {
    const auto text = find_embedded(sources, v.source_name);
    if (!text) {
      return fail(Errc::internal, fmt::format("kernel source {} is not embedded", v.source_name));
    }
    programs.push_back({v.source_name, std::string(*text), v.options});
  }
  return make_neo_slice_of(root, tool, context, programs, jobs);
}

namespace {

// The exact builds, kept with the job's log: to replay on a virtual device
// (or a real one) with `prewarm-cl-replay programs.list` there.
void
keep_program_list(const jobs::JobContext& context, const ReplayRun& fill)
{
  if (context.log_file.empty()) {
    return;
  }
  const auto kept = fs::path(context.log_file).replace_extension(".programs");
  std::error_code ignored;
  fs::remove_all(kept, ignored);
  fs::create_directories(kept, ignored);
  fs::copy(fill.work_dir / "sources", kept / "sources", fs::copy_options::recursive, ignored);
  fs::copy_file(fill.work_dir / "programs.list", kept / "programs.list", ignored);
  if (ignored) {
    log::warn("{}: the replayable program list not kept in {}: {}", context.job.id, kept.string(), ignored.message());
  }
}

// The hit proof: the same programs built again against a copy of the slice.
struct ReplayProof
{
  ReplayResult proved;
  std::size_t new_entries = 0;
  std::optional<std::string> first_new_entry;
  std::optional<NeoCacheStats> stats;
};

Result<ReplayProof>
prove_replay(const IntelRoot& root, const fs::path& tool, const VirtualDevice& device,
             const std::vector<ReplayProgram>& programs, const fs::path& neo, const fs::path& proof_dir)
{
  ReplayProof proof;
  PW_ASSIGN(const auto rerun, command::rerun_on_copies(
                                {{"neo", neo, proof_dir / "neo"}}, [&](const command::ProofCopies& copies) -> Status {
                                  ReplayRun again{tool, proof_dir, copies.dirs.at("neo")};
                                  again.stats = true;
                                  PW_ASSIGN(proof.proved, replay_programs(root, device, programs, again));
                                  return {};
                                }));
  proof.new_entries = command::new_entries(rerun);
  proof.first_new_entry = command::first_new_entry(rerun);
  proof.stats = read_neo_cache_stats(proof_dir / "neo");
  return proof;
}

} // namespace

Result<NeoSlice>
make_neo_slice_of(const IntelRoot& root, const fs::path& tool, const jobs::JobContext& context,
                  const std::vector<ReplayProgram>& programs, unsigned jobs)
{
  const auto started = std::chrono::steady_clock::now();
  PW_ASSIGN(const auto target,
            resolve_intel_target(context.target, context.manifest.find_profile(context.target.name)));
  const auto& device = target.device;
  if (programs.empty()) {
    return fail(Errc::internal, fmt::format("{}: no program to build on the virtual device", context.job.id));
  }
  const auto staging = context.work_dir / "neo-slice";
  const auto neo = staging / "neo";
  ReplayRun fill{tool, context.work_dir / "virtual-fill", neo};
  fill.trace = true;
  PW_ASSIGN(const auto filled, replay_programs(root, device, programs, fill));
  if (!filled.failed.empty()) {
    return fail(Errc::failed,
                fmt::format("virtual device {}: {} of {} programs failed to build: {}", device.describe(),
                            filled.failed.size(), programs.size(), filled.failed.front()),
                "E_VIRTUAL_DEVICE");
  }
  const auto entries = neo_cache_entries(neo);
  PW_ASSIGN(auto recording,
            NeoRecording::take({root, target, filled.extensions, neo, context.work_dir / "card-synthesis", jobs}));
  keep_program_list(context, fill);
  PW_ASSIGN(const auto proof, prove_replay(root, tool, device, programs, neo, context.work_dir / "virtual-proof"));
  PW_ASSIGN(const auto driver, checked_driver_release(root, device, filled));
  std::error_code ec;
  std::uint64_t bytes = 0;
  for (const auto& e : entries) {
    bytes += fs::file_size(neo / e, ec);
  }
  PW_TRY(recording.stage());
  NeoSlice slice;
  slice.output.staging_dir = staging;
  const bool opencl = std::ranges::any_of(entries, [](const auto& e) { return e.ends_with(".cl_cache"); });
  PW_ASSIGN(slice.output.requirements,
            recording.requirements(driver, filled, opencl ? OpenclEntries::present : OpenclEntries::absent));
  const auto& key = recording.key();
  slice.device = fmt::format("virtual {} {} rev {} (NEO {}, {})", device.product, key.device_id, key.revision,
                             driver, root.dir().string());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto& stats = proof.stats;
  const auto proved = stats ? fmt::format("{} hits, {} misses", stats->hits, stats->misses) : "no NEO statistics";
  slice.summary = fmt::format("NEO cache: {} programs -> {} entries ({} bytes) in {:.1f} s; re-run: {}, {} new "
                              "entries, {:.2f} s{}",
                              programs.size(), entries.size(), bytes, filled.seconds, proved, proof.new_entries,
                              proof.proved.seconds, recording.describe());
  if (proof.new_entries > 0 || (stats && stats->misses > 0)) {
    log::warn("{}: the re-run on the virtual device did not reuse every entry ({}; first new entry: {})",
              context.job.id, proved, proof.first_new_entry.value_or("none"));
  }
  nlohmann::json json = {
    {"virtual_device", device.describe()},
    {"intel_root", root.dir().string()},
    {"driver", driver},
    {"device_name", filled.device_name},
    {"pci_id", key.device_id},
    {"pci_revision", key.revision},
    {"igc", key.igc_identity},
    {"programs", programs.size()},
    {"entries", entries.size()},
    {"entry_bytes", bytes},
    {"bookkeeping_removed", recording.bookkeeping_removed()},
    {"fill_seconds", filled.seconds},
    {"proof_seconds", proof.proved.seconds},
    {"proof_new_entries", proof.new_entries},
    {"seconds", seconds},
  };
  json["card"] = recording.report();
  if (stats) {
    json["proof_hits"] = stats->hits;
    json["proof_misses"] = stats->misses;
  }
  slice.report_json = json.dump();
  return slice;
}

Result<jobs::JobOutcome>
VirtualDeviceExecutor::run(const jobs::JobContext& context)
{
  const auto started = std::chrono::steady_clock::now();
  // One list of programs for both: ocloc's zebins and the driver's NEO slice.
  PW_ASSIGN(const auto variants, aot::job_variants(context));
  PW_ASSIGN(auto outcome, m_aot.run_variants(context, variants));
  PW_ASSIGN(auto neo, make_neo_slice(*m_root, m_tool, context, variants, m_jobs));
  log::verbose("virtual device {}: {}", context.target.name, neo.summary);
  outcome = with_neo_slice(std::move(outcome), std::move(neo));
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

VirtualRecordedExecutor::VirtualRecordedExecutor(aot::RecordedAotOptions options)
  : m_recorded(options), m_jobs(options.jobs)
{
  locate_virtual_device(m_root, m_tool);
}

Result<jobs::JobOutcome>
VirtualRecordedExecutor::run(const jobs::JobContext& context)
{
  const auto started = std::chrono::steady_clock::now();
  PW_ASSIGN(auto outcome, m_recorded.run(context));
  PW_ASSIGN(const auto store, m_recorded.recorded_program_store(context));
  PW_ASSIGN(const auto sources, store::recorded_sources(store));
  if (sources.empty()) {
    return outcome; // the AOT executor said so: nothing was built
  }
  std::vector<ReplayProgram> programs;
  for (const auto& s : sources) {
    programs.push_back({fmt::format("recorded-{}.cl", s.key.substr(0, 12)), s.source, s.options});
  }
  PW_ASSIGN(auto neo, make_neo_slice_of(*m_root, m_tool, context, programs, m_jobs));
  log::verbose("virtual device {}: {}", context.target.name, neo.summary);
  outcome = with_neo_slice(std::move(outcome), std::move(neo));
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

} // namespace prewarm::virtual_device
