// SPDX-License-Identifier: Apache-2.0
#include "install/rollback_guard.hpp"

#include <fmt/format.h>

namespace prewarm::install {

Status
check_rollback(const ChannelState& state, const VerifiedBundle& verified)
{
  const auto& m = verified.manifest;
  const auto it = state.find(m.channel);
  if (it == state.end()) {
    return {};
  }
  const auto& high = it->second;
  if (m.serial < high.serial) {
    return fail(Errc::verify,
                fmt::format("channel {}: the bundle has serial {}, but serial {} was already installed here "
                            "(an older bundle; refusing to roll back) (rebuild with --serial {} or higher, or install into a "
                            "fresh --root)",
                            m.channel, m.serial, high.serial, high.serial + 1),
                "E_ROLLBACK");
  }
  if (m.serial == high.serial && verified.manifest_sha256 != high.manifest_sha256) {
    return fail(Errc::verify,
                fmt::format("channel {}: serial {} was installed here with manifest sha256 {}, this bundle has the "
                            "same serial with manifest sha256 {} (two different bundles signed with one serial) (rebuild "
                            "with --serial {} or higher: the default serial is the build time, SOURCE_DATE_EPOCH when "
                            "set, so a rebuild with the same SOURCE_DATE_EPOCH keeps the serial)",
                            m.channel, m.serial, high.manifest_sha256, verified.manifest_sha256, high.serial + 1),
                "E_ROLLBACK_EQUIVOCATION");
  }
  return {};
}

} // namespace prewarm::install
