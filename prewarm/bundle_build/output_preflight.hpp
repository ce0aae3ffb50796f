// SPDX-License-Identifier: Apache-2.0
// Checks, before the first job runs, that every place `prewarm build` will
// write to can be written: the bundle (--out), the report (--json FILE) and
// the job log directory. A build whose outputs cannot be written would
// otherwise fail after all its jobs ran. Nothing is created here: a check
// that fails leaves the file system as it was.
//
// A path is writable when its nearest existing ancestor is a directory this
// user may write into (missing directories are created later, as `mkdir -p`
// would), and the path itself is absent or of the kind that will replace it.
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <string_view>

namespace prewarm::bundle_build {

enum class OutputKind { file, bundle_directory, directory };

// `what` names the setting in messages ("--json", "--out"). Errors are
// Errc::usage with code E_OUTPUT, naming the path, why, and what to do.
Status check_output_path(const std::filesystem::path& path, OutputKind kind, std::string_view what);

} // namespace prewarm::bundle_build
