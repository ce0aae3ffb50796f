// SPDX-License-Identifier: Apache-2.0
#include "pack/bundle_expiry.hpp"

#include "base/log.hpp"

#include <fmt/format.h>

namespace prewarm::pack {

Status
check_bundle_expiry(std::string_view what, SysSeconds issued_at, SysSeconds expires, SysSeconds now,
                    ExpiryPolicy policy)
{
  if (expires - now >= k_min_validity) {
    return {};
  }
  const auto when = expires <= now ? fmt::format("expired at {}, before it is written ({})", format_rfc3339(expires),
                                                 format_rfc3339(now))
                                   : fmt::format("expires at {}, less than a day after it is written ({})",
                                                 format_rfc3339(expires), format_rfc3339(now));
  const auto validity = expires - issued_at;
  const auto days = std::chrono::duration_cast<std::chrono::days>(validity);
  const auto length = days == validity ? fmt::format("{}d", days.count()) : fmt::format("{}s", validity.count());
  const auto why = fmt::format("{} {}: its expiry is issued-at {} (SOURCE_DATE_EPOCH when set, else the clock) "
                               "plus the manifest's bundle.expires ({})",
                               what, when, format_rfc3339(issued_at), length);
  if (policy == ExpiryPolicy::warn) {
    log::warn("{} (written anyway: --allow-expired)", why);
    return {};
  }
  return fail(Errc::usage,
              fmt::format("{} (set SOURCE_DATE_EPOCH to a recent time, or raise bundle.expires; --allow-expired "
                          "writes it anyway)",
                          why),
              "E_EXPIRES_SOON");
}

} // namespace prewarm::pack
