// SPDX-License-Identifier: Apache-2.0
#include "install/channel_guard.hpp"

#include "base/log.hpp"

#include <fmt/format.h>

namespace prewarm::install {

Status
check_channel_occupancy(const std::optional<InstalledMarker>& installed, const bundle::BundleManifest& incoming,
                        const std::filesystem::path& root, ChannelReplacement replacement)
{
  if (!installed || installed->channel == incoming.channel) {
    return {};
  }
  if (replacement == ChannelReplacement::replace) {
    log::warn("replacing channel {} serial {} under {} with channel {} serial {} (--replace-channel)",
              installed->channel, installed->serial, root.string(), incoming.channel, incoming.serial);
    return {};
  }
  return fail(Errc::failed,
              fmt::format("{} holds channel {} serial {}; this bundle is channel {} serial {}, and one root holds one "
                          "channel (install it under another --root, or pass --replace-channel to replace {})",
                          root.string(), installed->channel, installed->serial, incoming.channel, incoming.serial,
                          installed->channel),
              "E_CHANNEL_OCCUPIED");
}

} // namespace prewarm::install
