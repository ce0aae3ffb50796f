// SPDX-License-Identifier: Apache-2.0
// The complete environment of a child process, and this process's own.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace prewarm::process {

// name -> value. Ordered, so that a printed environment and the child's envp
// are deterministic.
using Environment = std::map<std::string, std::string, std::less<>>;

// This process's environment (`environ`): the one reader of it. Entries
// without '=' or with an empty name are left out.
Environment inherited_environment();

// "NAME=value" entries, in the map's order (a child's envp).
std::vector<std::string> environment_entries(const Environment& environment);

} // namespace prewarm::process
