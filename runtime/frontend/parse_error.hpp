// SPDX-License-Identifier: Apache-2.0
// CLI11's parse failures in prewarm's own format and exit code:
//   prewarm: error: E_USAGE: build: --key: option requires a value (hint)
// --help and --version (which CLI11 reports as "errors" with status 0) print
// as CLI11 prints them and exit 0.
#pragma once

#include "base/error.hpp"

#include <CLI/CLI.hpp>

namespace prewarm::frontend {

// The Error a parse failure stands for: Errc::usage, code E_USAGE, the
// subcommand that was being parsed, CLI11's reason and a hint (`--help`).
Error usage_error(const CLI::App& app, const CLI::ParseError& error);

// For main(): prints help/version (exit 0) or the usage error (exit 2) and
// returns the exit status.
int report_parse_error(const CLI::App& app, const CLI::ParseError& error);

} // namespace prewarm::frontend
