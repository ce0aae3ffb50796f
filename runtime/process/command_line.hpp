// SPDX-License-Identifier: Apache-2.0
// argv as one line of text, for logs, messages and job descriptions.
#pragma once

#include <string>
#include <vector>

namespace prewarm::process {

// "a b 'c d'": each element shell-quoted where it needs it, so that the line
// pasted into sh runs the same argv.
std::string quote_argv(const std::vector<std::string>& argv);

} // namespace prewarm::process
