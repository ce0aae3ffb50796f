// SPDX-License-Identifier: Apache-2.0
// The child side of a built-in job (`prewarm run-job`, hidden): re-read the
// manifest, find the job's model and precision, run the representative
// workload on the given device with the caches the parent pointed us at, and
// write the engine's JSON report.
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace prewarm::build {

struct BuiltinJobArgs
{
  std::optional<std::filesystem::path> manifest_file; // empty: embedded default
  std::optional<std::filesystem::path> targets_file;  // empty: embedded registry
  std::string job_id;                                 // "<target>/<model>/<precision>"
  std::string device;                                 // engine device selector ("0")
  std::filesystem::path report_file;                  // JSON written here
};

Status run_builtin_job(const BuiltinJobArgs& args);

} // namespace prewarm::build
