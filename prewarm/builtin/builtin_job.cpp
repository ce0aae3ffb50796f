// SPDX-License-Identifier: Apache-2.0
#include "builtin/builtin_job.hpp"

#include "base/files.hpp"
#include "builtin/job_request.hpp"
#include "engine/models/workload.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace prewarm::builtin {

Status
run_builtin_job(const std::filesystem::path& spec_file)
{
  PW_ASSIGN(const auto spec, load_job_request(spec_file));
  engine::models::WorkloadRequest request;
  request.model = spec.model;
  request.precision = spec.precision;
  request.shapes = spec.shapes;
  request.coverage = spec.coverage;
  request.device_selector = spec.device_selector;
  // The drivers read their cache variables when the OpenCL platform loads,
  // which is inside run_workload: setting them here is before that.
  for (const auto& cache : spec.caches) {
    for (const auto& setting : bundle::cache_environment(cache.kind, cache.directory, 0)) {
      if (::setenv(setting.name.c_str(), setting.value.c_str(), 1) != 0) {
        return fail(Errc::failed,
                    fmt::format("{}: cannot set {}: {}", spec.job_id, setting.name, std::strerror(errno)));
      }
    }
    if (cache.kind == bundle::CacheKind::programs) {
      request.program_store = cache.directory;
    }
  }
  PW_ASSIGN(const auto report, engine::models::run_workload(request));
  return write_file_atomic(spec.report_file.string(), engine::models::to_json(report).dump(2) + "\n", 0644, Durability::none);
}

} // namespace prewarm::builtin
