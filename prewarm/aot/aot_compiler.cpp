// SPDX-License-Identifier: Apache-2.0
#include "aot/aot_compiler.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "jobs/job_pool.hpp"
#include "level_zero/aot_programs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <system_error>

namespace prewarm::aot {

namespace fs = std::filesystem;

Result<AotSupport>
assess_target(const Ocloc& ocloc, const AotTargetSpec& target)
{
  AotSupport support;
  if (target.ocloc_device.empty()) {
    support.reason = fmt::format("{}: the registry names no ocloc device for it", target.name);
    return support;
  }
  PW_ASSIGN(auto device, ocloc.lookup_device(target.ocloc_device));
  if (!device.known) {
    // The same words as the plan's skip reason (prewarm/manifest/plan.cpp).
    support.reason = fmt::format("{}: ocloc {} does not know '{}' (install a newer intel-opencl-icd / ocloc)",
                                 target.name, ocloc.driver_version(), target.ocloc_device);
    return support;
  }
  support.supported = true;
  support.ip_version = device.ip_version;
  return support;
}

namespace {

struct CompileJob
{
  std::size_t target = 0;
  std::size_t variant = 0;
};

struct CompiledProgram
{
  std::string key;
  std::string meta;
  OclocOutput output;
};

// The target records, each checked against ocloc: an unknown device fails
// the whole call before the first compile.
Result<std::vector<level_zero::AotTarget>>
resolve_targets(const Ocloc& ocloc, std::span<const AotTargetSpec> targets)
{
  std::vector<level_zero::AotTarget> records;
  for (const auto& target : targets) {
    if (!is_single_device_name(target.name)) {
      return fail(Errc::usage, fmt::format("AOT: target name {} cannot name a file", in_quotes(target.name)));
    }
    PW_ASSIGN(auto support, assess_target(ocloc, target));
    if (!support.supported) {
      return fail(Errc::usage, support.reason, "E_AOT_UNKNOWN_DEVICE");
    }
    if (!target.ip_version.empty() && target.ip_version != support.ip_version) {
      log::warn("{}: the registry says IP version {} for {}, ocloc {} says {}; recording ocloc's", target.name,
                target.ip_version, target.ocloc_device, ocloc.driver_version(), support.ip_version);
    }
    level_zero::AotTarget record;
    record.ocloc_device = target.ocloc_device;
    record.ip_version = support.ip_version;
    record.compiler = ocloc.driver_version();
    record.pci_ids = target.pci_ids;
    std::ranges::sort(record.pci_ids);
    records.push_back(std::move(record));
  }
  return records;
}

// Each variant's embedded source; a missing one fails before the first compile.
Result<std::vector<std::string_view>>
resolve_sources(std::span<const KernelVariant> variants, std::span<const EmbeddedFile> sources)
{
  std::vector<std::string_view> variant_sources;
  for (const auto& variant : variants) {
    auto source = find_embedded(sources, variant.source_name);
    if (!source) {
      return fail(Errc::internal, fmt::format("AOT: kernel source {} is not embedded", in_quotes(variant.source_name)));
    }
    variant_sources.push_back(*source);
  }

  return variant_sources;
}

// Every (target, variant) compiled on the job pool; result t * variants + v
// is target t's variant v, whatever order they ran in.
std::vector<Result<CompiledProgram>>
compile_all(const Ocloc& ocloc, std::span<const AotTargetSpec> targets, std::span<const KernelVariant> variants,
            const std::vector<level_zero::AotTarget>& records, const std::vector<std::string_view>& variant_sources,
            const AotCompileOptions& options)
{
  std::vector<CompileJob> jobs;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      jobs.push_back({t, v});
    }
  }
  // Longest first: a long compile started last runs alone at the end while
  // the other workers idle (measured: attention.cl takes ~3x the others, and
  // in name order a w8a8 compile ran alone for the last seconds at --jobs 2).
  // Source size is the estimate of a compile's length: cheap and good enough
  // to put attention/w8a8/conv ahead of the small row kernels. Only the
  // running order changes; results and files stay in job order.
  const auto order =
    prewarm::jobs::longest_first(jobs.size(), [&](std::size_t i) { return variant_sources[jobs[i].variant].size(); });
  auto ran = prewarm::jobs::run_jobs<CompiledProgram>(
    jobs.size(), options.jobs, [&](std::size_t position) -> Result<CompiledProgram> {
      const auto& job = jobs[order[position]];
      const auto& target = targets[job.target];
      const auto& variant = variants[job.variant];
      OclocCompileRequest request;
      request.source_name = variant.source_name;
      request.source = variant_sources[job.variant];
      request.options = variant.options;
      request.device = target.ocloc_device;
      const auto context =
        fmt::format("{} ({}): {} [{}]", target.name, target.ocloc_device, variant.source_name, variant.options);
      PW_ASSIGN_CTX(auto output, context, ocloc.compile(request));
      if (options.validation == Validation::validate) {
        PW_ASSIGN_CTX(auto validation, context, ocloc.validate(output.zebin, target.ocloc_device));
        if (!validation.valid) {
          // One line for the build's log and the job's summary; the whole
          // report (its warnings too) with -v.
          log::verbose("{}: ocloc validate said:\n{}", context, validation.output);
          return fail(Errc::failed,
                      fmt::format("{}: ocloc validate rejected the zebin (exit {}): {}", context, validation.exit_code,
                                  validation.reason),
                      "E_AOT_INVALID_ZEBIN");
        }
      }
      const auto key = level_zero::AotProgramKey::for_target(records[job.target], request.source, variant.options);
      return CompiledProgram{key.digest(), key.canonical_text(), std::move(output)};
    });
  std::vector<std::optional<Result<CompiledProgram>>> by_job(jobs.size());
  for (std::size_t position = 0; position < ran.size(); ++position) {
    by_job[order[position]].emplace(std::move(ran[position]));
  }
  std::vector<Result<CompiledProgram>> results;
  results.reserve(jobs.size());
  for (auto& r : by_job) {
    results.push_back(std::move(*r));
  }
  return results;
}

// One target's directory: its programs in variant order, then its record.
Result<AotTargetReport>
write_target(const AotTargetSpec& target, const level_zero::AotTarget& record, std::span<const KernelVariant> variants,
             std::span<const Result<CompiledProgram>> results, const fs::path& programs_dir)
{
  const fs::path dir = programs_dir / level_zero::k_aot_directory / target.ocloc_device;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(dir.string()), ec.message()));
  }
  AotTargetReport target_report;
  target_report.name = target.name;
  target_report.ocloc_device = target.ocloc_device;
  target_report.ip_version = record.ip_version;
  target_report.compiler = record.compiler;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const auto& result = results[v];
    if (!result) {
      target_report.left_out.push_back(result.error().message());
      log::warn("AOT: left out {}", result.error().message());
      continue;
    }
    const auto& program = *result;
    PW_TRY(write_file_atomic(dir / (program.key + ".zebin"), program.output.zebin, 0644, Durability::none));
    PW_TRY(write_file_atomic(dir / (program.key + ".spv"), program.output.spirv, 0644, Durability::none));
    // The meta last: a reader that sees it sees the binaries too.
    PW_TRY(write_file_atomic(dir / (program.key + ".meta"), program.meta, 0644, Durability::none));
    target_report.zebin_bytes += program.output.zebin.size();
    target_report.spirv_bytes += program.output.spirv.size();
    target_report.programs.push_back(fmt::format("{} [{}] -> {} ({} bytes)", variants[v].source_name,
                                                 variants[v].options, program.key.substr(0, 12),
                                                 program.output.zebin.size()));
  }
  PW_TRY(write_file_atomic(dir / ("target." + target.name), record.to_text(), 0644, Durability::none));
  return target_report;
}

} // namespace

Result<AotReport>
compile_targets(const Ocloc& ocloc, std::span<const AotTargetSpec> targets, std::span<const KernelVariant> variants,
                std::span<const EmbeddedFile> sources, const fs::path& programs_dir, const AotCompileOptions& options)
{
  const auto started = std::chrono::steady_clock::now();
  AotReport report;
  PW_ASSIGN(const auto records, resolve_targets(ocloc, targets));
  PW_ASSIGN(const auto variant_sources, resolve_sources(variants, sources));
  const auto results = compile_all(ocloc, targets, variants, records, variant_sources, options);
  report.compiles = results.size();

  // Write in job order (deterministic), one target directory at a time.
  std::vector<Error> errors;
  for (const auto& r : results) {
    if (!r) {
      errors.push_back(r.error());
    }
  }
  if (!errors.empty() && options.on_failure == CompileFailure::fail) {
    std::string message = fmt::format("AOT: {} of {} compiles failed", errors.size(), results.size());
    for (const auto& e : errors) {
      message += "\n  " + e.message();
    }
    return fail(Errc::failed, message, errors.front().code());
  }
  for (std::size_t t = 0; t < targets.size(); ++t) {
    PW_ASSIGN(auto target_report,
              write_target(targets[t], records[t], variants,
                           std::span(results).subspan(t * variants.size(), variants.size()), programs_dir));
    report.targets.push_back(std::move(target_report));
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

} // namespace prewarm::aot
