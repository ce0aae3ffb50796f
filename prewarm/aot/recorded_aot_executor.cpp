// SPDX-License-Identifier: Apache-2.0
#include "aot/recorded_aot_executor.hpp"

#include "aot/aot_executor.hpp"
#include "base/encoding.hpp"
#include "base/log.hpp"
#include "command/command_executor.hpp"
#include "command/command_job.hpp"
#include "manifest/plan.hpp"
#include "store/program_record.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <span>
#include <system_error>

namespace prewarm::aot {

namespace fs = std::filesystem;

RecordedAotExecutor::Recording&
RecordedAotExecutor::recording_for(const jobs::JobContext& context)
{
  // A job without a precision axis (its command never names "{precision}")
  // runs as the command executor runs it: no precision, no PREWARM_PRECISION.
  const auto precision =
    context.job.has_precision ? std::string(manifest::precision_name(context.job.precision)) : std::string();
  Recording* recording = nullptr;
  std::size_t index = 0;
  {
    std::lock_guard lock(m_mutex);
    auto& slot = m_recordings[context.model.name + "/" + precision];
    if (!slot) {
      slot = std::make_unique<Recording>();
    }
    recording = slot.get();
    index = m_recordings.size();
  }
  std::call_once(recording->once, [&] {
    recording->store = [&]() -> Result<fs::path> {
      {
        std::lock_guard lock(m_mutex);
        if (!m_scratch) {
          PW_ASSIGN(auto scratch, TempDir::create("prewarm-recorded-aot-"));
          m_scratch.emplace(std::move(scratch));
        }
      }
      const auto work_dir =
        m_scratch->path() / (precision.empty() ? fmt::format("{}", index) : fmt::format("{}-{}", index, precision));
      std::error_code ec;
      fs::create_directories(work_dir, ec);
      if (ec) {
        return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(work_dir.string()), ec.message()));
      }
      command::CommandJobRequest request;
      request.job_id = fmt::format("{} (recording for AOT)", context.job.id);
      request.precision = precision;
      PW_ASSIGN_CTX(request.workload, context.job.id, command::to_command_workload(*context.model.command));
      // Only what ocloc needs: the layer's recording, no hit proof, no
      // custom caches (the run-here jobs of this model package those).
      request.workload.kinds = {bundle::CacheKind::programs};
      request.workload.custom_caches.clear();
      request.workload.verify = command::VerifyMode::off;
      request.workload.environment.emplace("PREWARM_TARGET", context.job.target);
      if (context.job.has_precision) {
        request.workload.environment.emplace("PREWARM_PRECISION", precision);
      }
      request.work_dir = work_dir;
      request.log_file = context.log_file_or("recording.log");
      PW_ASSIGN(auto result, command::run_command_job(request));
      if (!result.succeeded()) {
        return fail(Errc::failed, fmt::format("the recording run failed: {}", result.report()));
      }
      recording->summary = fmt::format("command {} in {:.1f} s", result.run.describe(),
                                       std::chrono::duration<double>(result.run.duration).count());
      return result.staging_root / std::string(bundle::to_string(bundle::CacheKind::programs));
    }();
  });
  return *recording;
}

Result<std::filesystem::path>
RecordedAotExecutor::recorded_program_store(const jobs::JobContext& context)
{
  auto& recording = recording_for(context);
  return *recording.store;
}

Result<jobs::JobOutcome>
RecordedAotExecutor::run(const jobs::JobContext& context)
{
  const auto started = std::chrono::steady_clock::now();
  if (!context.model.command) {
    return fail(Errc::internal, fmt::format("aot-recorded executor given {}, not a command", context.model.name));
  }
  PW_ASSIGN(const auto spec, aot_target_spec(context.target));
  PW_ASSIGN(const auto* toolchain, m_toolchains.for_device(spec.ocloc_device));
  const auto& ocloc = toolchain->ocloc;

  auto& recording = recording_for(context);
  if (!*recording.store) {
    return fail(recording.store->error());
  }
  PW_ASSIGN(const auto sources, store::recorded_sources(**recording.store));

  // The recorded programs as the AOT compiler takes them: one "file" each
  // (named by its record key) and its options.
  std::vector<std::string> names;
  std::vector<KernelVariant> variants;
  std::vector<EmbeddedFile> files;
  names.reserve(sources.size());
  for (const auto& source : sources) {
    names.push_back(fmt::format("recorded-{}.cl", source.key.substr(0, 12)));
  }
  for (std::size_t i = 0; i < sources.size(); ++i) {
    variants.push_back({names[i], sources[i].options});
    files.push_back({names[i], sources[i].source});
  }

  jobs::JobOutcome outcome;
  if (sources.empty()) {
    outcome.device = fmt::format("aot {} (ocloc {})", spec.ocloc_device, ocloc.driver_version());
    outcome.summary = fmt::format("the command built no OpenCL C program ({}): nothing to compile ahead of time",
                                  recording.summary);
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return outcome;
  }
  const auto staging = context.work_dir / "slice";
  AotCompileOptions options;
  options.jobs = m_options.jobs;
  options.validation = m_options.validation;
  options.on_failure = CompileFailure::leave_out;
  PW_ASSIGN(auto report, compile_targets(ocloc, std::span(&spec, 1), variants, files, staging / "programs", options));
  const auto& t = report.targets.at(0);
  const auto compiled = t.programs.size();
  if (compiled > 0) {
    outcome.outputs.push_back({staging, aot_requirements(spec, t.compiler)});
  }
  outcome.device = fmt::format("aot {} (IP {}, {})", t.ocloc_device, t.ip_version, describe(*toolchain));
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  outcome.variants = compiled;
  outcome.summary = fmt::format("{} of {} recorded programs for {} ({} bytes of zebin, validated: {}){}; recorded by {}",
                                compiled, sources.size(), t.ocloc_device, t.zebin_bytes,
                                m_options.validation == Validation::validate ? "yes" : "no",
                                t.left_out.empty() ? std::string() : fmt::format(", {} left out", t.left_out.size()),
                                recording.summary);
  outcome.job_line = fmt::format("{} aot aot-recorded: {} recorded programs for {}", context.job.id, compiled,
                                 t.ocloc_device);
  auto json = aot_target_json(t, report.seconds);
  json["source"] = "recorded";
  json["toolchain"] = toolchain->origin;
  json["recorded"] = sources.size();
  json["left_out"] = t.left_out;
  json["recording"] = recording.summary;
  outcome.report_json = json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  return outcome;
}

} // namespace prewarm::aot
