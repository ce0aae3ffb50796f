// SPDX-License-Identifier: Apache-2.0
#include "build/builtin_job.hpp"

#include "base/files.hpp"
#include "engine/workload.hpp"
#include "manifest/manifest.hpp"
#include "manifest/presets.hpp"
#include "manifest/target_registry.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>


namespace prewarm::build {

Status
run_builtin_job(const BuiltinJobArgs& args)
{
  PW_ASSIGN(const auto registry, args.targets_file ? manifest::TargetRegistry::load_file(*args.targets_file)
                                                   : manifest::TargetRegistry::embedded());
  PW_ASSIGN(const auto presets, manifest::PresetLibrary::embedded());
  const manifest::ManifestInputs inputs{registry, presets};
  PW_ASSIGN(const auto parsed, args.manifest_file ? manifest::load_manifest_file(*args.manifest_file, inputs)
                                                  : manifest::load_default_manifest(inputs));

  // "<target>/<model>/<precision>"; model names hold no '/'.
  const auto first = args.job_id.find('/');
  const auto last = args.job_id.rfind('/');
  if (first == std::string::npos || first == last) {
    return fail(Errc::usage, fmt::format("invalid job id '{}' (expected TARGET/MODEL/PRECISION)", args.job_id));
  }
  const auto model_name = args.job_id.substr(first + 1, last - first - 1);
  const auto precision = manifest::parse_precision(args.job_id.substr(last + 1));
  const auto* model = parsed.find_model(model_name);
  if (model == nullptr || !precision || !model->is_builtin()) {
    return fail(Errc::usage, fmt::format("job '{}' names no built-in model and precision of {}", args.job_id,
                                         parsed.source_name));
  }
  engine::WorkloadRequest request;
  request.model = *model->architecture;
  request.precision = *precision;
  request.shapes = parsed.shapes;
  request.coverage = parsed.coverage;
  request.device_selector = args.device;
  if (const char* store = std::getenv("PREWARM_PROGRAM_STORE"); store != nullptr && *store != '\0') {
    request.program_store = store;
  }
  PW_ASSIGN(const auto report, engine::run_workload(request));
  return write_file_atomic(args.report_file, engine::to_json(report).dump(2) + "\n", 0644, Durability::none);
}

} // namespace prewarm::build
