// SPDX-License-Identifier: Apache-2.0
#include "aot/aot_executor.hpp"

#include "base/embedded_file.hpp"
#include "base/log.hpp"
#include "level_zero/aot_programs.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <span>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files(); // prewarm_kernels (kernels/*.cl)
}

namespace prewarm::aot {

std::vector<bundle::Requirement>
aot_requirements(const AotTargetSpec& target, const std::string& compiler)
{
  auto ids = target.pci_ids;
  // The devices whose driver also loads this binary (level_zero::loads_also_on:
  // an mtl-u zebin on Meteor Lake H, a dg2-g10 one on DG2-G11): a host with
  // one of them installs the slice when the bundle has none of its own, and
  // the runtime's selection serves it there by IP version.
  for (const auto& id : target.compatible_pci_ids) {
    if (level_zero::loads_also_on(target.ip_version, compiler, id.first)) {
      ids.push_back(id.second);
    }
  }
  std::ranges::sort(ids);
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string list;
  for (const auto& id : ids) {
    list += (list.empty() ? "" : ",") + id;
  }
  // A host reports its NEO release through OpenCL (zero-padded) or through
  // Level Zero (1.3.<build>): every spelling names the compiler
  // (level_zero/aot_programs.hpp).
  std::string spellings;
  for (const auto& s : level_zero::release_spellings(compiler)) {
    spellings += (spellings.empty() ? "" : ",") + s;
  }
  return {
    spellings == compiler ? bundle::Requirement{"intel.driver", "==", compiler}
                          : bundle::Requirement{"intel.driver", "in", spellings},
    {"pci-id", "in", list},
    {"vendor", "==", "intel"},
  };
}

Result<AotTargetSpec>
aot_target_spec(const manifest::Target& target)
{
  if (target.vendor != manifest::Vendor::intel) {
    return fail(Errc::internal, fmt::format("an AOT job for non-Intel target {}", target.name));
  }
  if (target.pci_ids.empty()) {
    return fail(Errc::usage,
                fmt::format("{}: the registry lists no PCI ids, so no host could ever select its AOT binaries",
                            target.name));
  }
  AotTargetSpec spec{target.name, target.ocloc_device, target.ip_version, target.pci_ids};
  // Candidates for aot_requirements: every other Intel target of the
  // registry compiled in, by IP version (the rules need the compiler's
  // version, known only after the compile).
  static const auto registry = manifest::TargetRegistry::embedded();
  if (registry && !target.ip_version.empty()) {
    for (const auto& other : registry->targets()) {
      if (other.vendor == manifest::Vendor::intel && other.ip_version != target.ip_version && !other.ip_version.empty()) {
        for (const auto& id : other.pci_ids) {
          spec.compatible_pci_ids.emplace_back(other.ip_version, id);
        }
      }
    }
  }
  return spec;
}

nlohmann::json
aot_target_json(const AotTargetReport& target, double compile_seconds)
{
  return {
    {"strategy", "aot"},
    {"target", target.name},
    {"ocloc_device", target.ocloc_device},
    {"ip_version", target.ip_version},
    {"compiler", target.compiler},
    {"programs", target.programs},
    {"zebin_bytes", target.zebin_bytes},
    {"spirv_bytes", target.spirv_bytes},
    {"compile_seconds", compile_seconds},
  };
}

Result<std::vector<KernelVariant>>
job_variants(const jobs::JobContext& context)
{
  if (!context.model.architecture) {
    return fail(Errc::internal, fmt::format("aot executor given model {} without an architecture", context.model.name));
  }
  return workload_variants(*context.model.architecture, context.job.precision, context.manifest.shapes,
                           context.manifest.coverage);
}

Result<jobs::JobOutcome>
AotExecutor::run(const jobs::JobContext& context)
{
  PW_ASSIGN(const auto variants, job_variants(context));
  return run_variants(context, variants);
}

Result<jobs::JobOutcome>
AotExecutor::run_variants(const jobs::JobContext& context, std::span<const KernelVariant> variants)
{
  const auto started = std::chrono::steady_clock::now();
  PW_ASSIGN(const auto spec, aot_target_spec(context.target));
  PW_ASSIGN(const auto* toolchain, m_toolchains.for_device(spec.ocloc_device));

  const auto staging = context.work_dir / "slice";
  AotCompileOptions options;
  options.jobs = m_options.jobs;
  options.validation = m_options.validation;
  // A program ocloc cannot compile, or whose zebin its validator rejects, is
  // left out with the reason (the engine builds it from SPIR-V where it runs);
  // the target's other programs still ship. Only nothing at all is a failure.
  options.on_failure = CompileFailure::leave_out;
  PW_ASSIGN(auto report, compile_targets(toolchain->ocloc, std::span(&spec, 1), variants, kernels::embedded_files(),
                                         staging / "programs", options));
  const auto& t = report.targets.at(0);
  if (t.programs.empty()) {
    return fail(Errc::failed,
                fmt::format("AOT {}: none of {} programs compiled for {}; first: {}", context.job.id, variants.size(),
                            t.ocloc_device, t.left_out.empty() ? "(no reason)" : t.left_out.front()),
                "E_AOT_COMPILE");
  }

  jobs::JobOutcome outcome;
  outcome.outputs.push_back({staging, aot_requirements(spec, t.compiler)});
  outcome.device = fmt::format("aot {} (IP {}, {})", t.ocloc_device, t.ip_version, describe(*toolchain));
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  outcome.variants = variants.size();
  outcome.summary = fmt::format("{} programs for {} ({} bytes of zebin, validated: {})", t.programs.size(),
                                t.ocloc_device, t.zebin_bytes,
                                m_options.validation == Validation::validate ? "yes" : "no");
  if (!t.left_out.empty()) {
    // The first reason on one line, cut short: the whole text is in the report.
    auto first = t.left_out.front();
    std::ranges::replace(first, '\n', ' ');
    if (first.size() > 300) {
      first = first.substr(0, 297) + "...";
    }
    outcome.summary += fmt::format("; {} of {} left out (built from SPIR-V where they run): {}", t.left_out.size(),
                                   variants.size(), first);
  }
  auto json = aot_target_json(t, report.seconds);
  json["left_out"] = t.left_out;
  json["jobs"] = m_options.jobs;
  json["toolchain"] = toolchain->origin;
  outcome.report_json = json.dump();
  log::verbose("aot {}: {}", t.name, outcome.summary);
  return outcome;
}

} // namespace prewarm::aot
