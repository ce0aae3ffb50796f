// SPDX-License-Identifier: Apache-2.0
// What a command model's application needs at run time besides the built-in
// cache kinds, read from the build manifest:
//
//   command:
//     runtime_env:                  exported by `prewarm-runtime env`/`exec`
//       PYOPENCL_NO_CACHE: "1"      while a slice of this model is installed
//     caches:                       caches no built-in kind knows
//       - name: hashcat             [a-z0-9][a-z0-9._-]{0,63}, no built-in kind name
//         variable: XDG_CACHE_HOME  points the program at the cache directory
//         subdir: hashcat           optional: only $XDG_CACHE_HOME/hashcat is
//                                   captured (the rest of the directory is
//                                   another program's business)
//       - name: pytensor            a directory carried inside another
//         variable: PYTENSOR_FLAGS  variable's value: `flag` is KEY={dir},
//         flag: base_compiledir={dir}   merged into the value the
//         separator: ","            application has ("," or " " between its
//                                   flags; bundle/custom_cache.hpp)
//
// The builder points each variable into staging for the warm-up, captures
// the directory, and signs it into the slice as a custom cache
// (runtime/bundle/custom_cache.hpp); the runtime installs it under ROOT and
// exports the variable. Variables and names are checked against the
// runtime's rules here (runtime/bundle/runtime_variable.hpp), so a denied
// variable, a name that collides with a built-in kind or a subdir that leaves
// the cache directory is an error naming FILE:LINE:COLUMN.
#pragma once

#include "base/error.hpp"
#include "bundle/custom_cache.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace prewarm::manifest {

namespace yaml {
struct Source;
}

struct CustomCacheSpec
{
  std::string name;
  std::string variable;
  std::filesystem::path subdir;               // relative, no "..": empty = the whole directory
  std::optional<bundle::CacheFlag> flag = {}; // the directory is KEY=DIR among the variable's flags
  std::string position;                       // "FILE:LINE:COL" of the entry
};

// `runtime_env:` (a map of NAME: "value").
Result<std::map<std::string, std::string>> read_runtime_env(const yaml::Source& source,
                                                            const YAML::Node& node,
                                                            const std::string& path);

// `caches:` (a non-empty list); names and variables unique; no variable that
// `runtime_env` also sets; `flag` and `separator` together or neither.
Result<std::vector<CustomCacheSpec>> read_custom_caches(const yaml::Source& source,
                                                        const YAML::Node& node,
                                                        const std::string& path,
                                                        const std::map<std::string, std::string>& runtime_env);

// A command's `env` value that sets a flag a custom cache carries its
// directory in (PYTENSOR_FLAGS: "base_compiledir=/x" beside a cache with
// flag base_compiledir={dir}): the message, naming the cache; empty: none.
std::string env_flag_conflict(const std::vector<CustomCacheSpec>& caches, const std::string& variable,
                              const std::string& value);

} // namespace prewarm::manifest
