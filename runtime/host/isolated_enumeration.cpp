// SPDX-License-Identifier: Apache-2.0
#include "host/isolated_enumeration.hpp"

#include "base/log.hpp"
#include "host/host_description_file.hpp"
#include "host/private_home.hpp"
#include "host/subprocess.hpp"

#include <fmt/format.h>

namespace prewarm::host {

Result<std::vector<HostDevice>>
enumerate_isolated(std::string_view source, const std::function<Result<std::vector<HostDevice>>()>& enumerate,
                   std::chrono::milliseconds timeout)
{
  PW_ASSIGN(const std::string json, run_isolated(
                                      [&] {
                                        const PrivateHomeIfUnusable home; // PoCL needs one
                                        auto found = enumerate();
                                        return found ? host_description_json(*found) : "!" + found.error().message();
                                      },
                                      timeout));
  if (json.starts_with("!")) {
    log::verbose("no {} devices: {}", source, std::string_view(json).substr(1));
    return std::vector<HostDevice>{};
  }
  return parse_host_description(json, fmt::format("{} probe", source));
}

} // namespace prewarm::host
