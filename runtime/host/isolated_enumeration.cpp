// SPDX-License-Identifier: Apache-2.0
#include "host/isolated_enumeration.hpp"

#include "base/log.hpp"
#include "host/host_description_file.hpp"
#include "host/private_home.hpp"
#include "host/subprocess.hpp"

#include <fmt/format.h>

namespace prewarm::host {

Result<IsolatedListing>
list_isolated(const std::function<Result<std::string>()>& enumerate, std::chrono::milliseconds timeout)
{
  // The child's answer is the text, or "!" and the reason it found nothing.
  auto answer = run_isolated(
    [&] {
      const PrivateHomeIfUnusable home; // PoCL needs one
      auto found = enumerate();
      return found ? *found : "!" + found.error().message();
    },
    timeout);
  if (!answer) {
    return fail(std::move(answer).error());
  }
  if (answer->starts_with("!")) {
    return IsolatedListing{false, answer->substr(1)};
  }
  return IsolatedListing{true, std::move(*answer)};
}

Result<std::vector<HostDevice>>
enumerate_isolated(std::string_view source, const std::function<Result<std::vector<HostDevice>>()>& enumerate,
                   std::chrono::milliseconds timeout)
{
  PW_ASSIGN(const auto listing, list_isolated(
                                  [&]() -> Result<std::string> {
                                    PW_ASSIGN(const auto found, enumerate());
                                    return host_description_json(found);
                                  },
                                  timeout));
  if (!listing.found) {
    log::verbose("no {} devices: {}", source, listing.text);
    return std::vector<HostDevice>{};
  }
  return parse_host_description(listing.text, fmt::format("{} probe", source));
}

} // namespace prewarm::host
