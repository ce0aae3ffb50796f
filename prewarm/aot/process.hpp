// SPDX-License-Identifier: Apache-2.0
// Runs one external tool (ocloc) to completion: argv without a shell, a
// chosen working directory, stdout and stderr merged into one captured text.
// ocloc writes helper files (OCL_DRIVER_VERSION, *.spv) into its working
// directory, so every call here runs in a private scratch directory. A layer
// over process/run.hpp.
#pragma once

#include "base/error.hpp"
#include "process/run.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::aot {

// How it ended (process/run.hpp: succeeded() and describe() say it as every
// runner does), with stdout and stderr, interleaved as written, in
// Outcome::output. Errors only when the program cannot be started or waited
// for; a non-zero exit is a result, not an error (the caller knows what it
// means).
Result<process::Outcome> run_process(const std::vector<std::string>& argv,
                                  const std::filesystem::path& working_directory);

} // namespace prewarm::aot
