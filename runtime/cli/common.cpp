// SPDX-License-Identifier: Apache-2.0
#include "cli/runtime_commands.hpp"

#include <fmt/format.h>

namespace prewarm::runtime_cli {

std::string
describe(const Error& error)
{
  if (error.code().empty()) {
    return error.message();
  }
  return fmt::format("{}: {}", error.code(), error.message());
}

} // namespace prewarm::runtime_cli
