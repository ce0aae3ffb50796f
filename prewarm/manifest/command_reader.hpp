// SPDX-License-Identifier: Apache-2.0
// The reader of a model's `command:` section (manifest.hpp gives its format):
// argv, cwd, env, timeout, shell, the kinds (each a row of
// bundle/cache_kind.cpp, two that locate one cache refused), runtime_env,
// the custom caches and verify. Errors name FILE:LINE:COLUMN and the field.
#pragma once

#include "manifest/manifest.hpp"
#include "manifest/yaml_reader.hpp"

#include <filesystem>
#include <string>

namespace prewarm::manifest {

Result<CommandWorkload> read_command(const yaml::Source& source, const YAML::Node& node, const std::string& path,
                                     const std::filesystem::path& base_directory);

} // namespace prewarm::manifest
