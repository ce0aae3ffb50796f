// SPDX-License-Identifier: Apache-2.0
// The child side of a built-in job (`prewarm run-job --spec FILE`, hidden):
// read the job request the parent wrote (builtin/job_request.hpp), point the caches
// it names at their directories, run the representative workload on its
// device and write the engine's JSON report. It reads neither the manifest
// nor the target registry: the spec is all it runs.
#pragma once

#include "base/error.hpp"

#include <filesystem>

namespace prewarm::builtin {

Status run_builtin_job(const std::filesystem::path& spec_file);

} // namespace prewarm::builtin
