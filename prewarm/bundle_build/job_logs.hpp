// SPDX-License-Identifier: Apache-2.0
// Where `prewarm build` keeps each job's full output, so that it is still
// there when the command has returned (the job's work directory is not):
//   <log dir>/<target>/<model>/<precision>.log     (the job id as a path)
// The log directory is --log-dir, else "<BUNDLE>.logs" beside the bundle.
// A job that writes no output of its own (aot) gets its outcome written
// there, so every job of the plan that ran has a log.
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <string_view>

namespace prewarm::bundle_build {

// "<bundle>.logs" ("out/default.bundle" -> "out/default.bundle.logs").
std::filesystem::path default_log_dir(const std::filesystem::path& bundle);

// The log file of `job_id` ("cpu/qwen/fp32") below `dir`.
std::filesystem::path job_log_path(const std::filesystem::path& dir, std::string_view job_id);

// Makes the file's directory and removes a previous build's log of the same
// job (command jobs append to their log).
Status prepare_job_log(const std::filesystem::path& file);

// Appends `text` to the log (creating it): the builder's own record of the
// job's outcome, after what the job wrote.
void append_to_job_log(const std::filesystem::path& file, std::string_view text);

} // namespace prewarm::bundle_build
