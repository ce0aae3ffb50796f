// SPDX-License-Identifier: Apache-2.0
// What a manifest can tell of a command that runs a Python interpreter
// directly: that it is one, and whether the interpreter's own options leave
// the pycache kind nothing to capture. The capture points PYTHONPYCACHEPREFIX
// at staging and drops PYTHONDONTWRITEBYTECODE from the environment, but an
// option on the command line outranks both, and Python says nothing: the
// build would sign an empty slice after a full warm-up. So the manifest
// reader refuses such a command before anything runs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::manifest {

// Whether argv runs a Python interpreter directly ("python", "python3.11",
// "/usr/bin/python3"; not "python-config", not "env python3").
bool looks_like_python(const std::vector<std::string>& argv);

struct ArgvProblem
{
  std::size_t index = 0; // the argv item that holds the option
  std::string what;      // why, and what to do
};

// The first interpreter option (before the script, -c or -m) that stops
// the bytecode the pycache kind captures: -B (writes none), -E and -I (ignore
// PYTHONPYCACHEPREFIX), -X pycache_prefix (outranks it). Options may be
// grouped ("-OB") and -W/-X take their value attached or as the next item.
// Nothing when argv is not a Python interpreter.
std::optional<ArgvProblem> pycache_blocker(const std::vector<std::string>& argv);

} // namespace prewarm::manifest
