// SPDX-License-Identifier: Apache-2.0
// The report a built-in job's child writes and the parent reads back: the
// engine's WorkloadReport as engine::models::to_json() writes it (engine/models/
// workload.hpp), read into the same typed struct by the strict reader the
// job request uses (jobs/strict_json.hpp). Every field is required and no
// other is allowed: a report from another build of prewarm is refused by
// name, never read as zeros.
#pragma once

#include "base/error.hpp"
#include "engine/models/workload.hpp"

#include <filesystem>
#include <string_view>

namespace prewarm::builtin {

// Errc::failed naming the report and the field ("device.properties").
Result<engine::models::WorkloadReport> parse_job_report(std::string_view text, std::string_view source_name);
Result<engine::models::WorkloadReport> load_job_report(const std::filesystem::path& file);

} // namespace prewarm::builtin
