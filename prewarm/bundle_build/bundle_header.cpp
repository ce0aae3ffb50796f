// SPDX-License-Identifier: Apache-2.0
#include "bundle_build/bundle_header.hpp"

#include <fmt/format.h>

namespace prewarm::bundle_build {

namespace {

SerialChoice
choose_serial(std::optional<std::uint64_t> flag, const manifest::Manifest& manifest, std::optional<SysSeconds> epoch,
              SysSeconds now)
{
  if (flag) {
    return SerialChoice{*flag, "--serial"};
  }
  if (manifest.bundle.serial) {
    return SerialChoice{*manifest.bundle.serial, fmt::format("bundle.serial in {}", manifest.source_name)};
  }
  if (epoch) {
    return SerialChoice{static_cast<std::uint64_t>(epoch->time_since_epoch().count()),
                        "SOURCE_DATE_EPOCH (default: the build time)"};
  }
  return SerialChoice{static_cast<std::uint64_t>(now.time_since_epoch().count()),
                      "the clock (default: the build time; SOURCE_DATE_EPOCH overrides)"};
}

} // namespace

Result<BundleHeader>
decide_bundle_header(const std::optional<std::string>& channel, std::optional<std::uint64_t> serial,
                     const manifest::Manifest& manifest, SysSeconds now)
{
  BundleHeader header;
  header.channel = channel.value_or(manifest.bundle.channel);
  PW_ASSIGN(header.source_date_epoch, source_date_epoch());
  header.serial = choose_serial(serial, manifest, header.source_date_epoch, now);
  header.issued_at = header.source_date_epoch.value_or(now);
  header.expires = header.issued_at + manifest.bundle.expires;
  return header;
}

} // namespace prewarm::bundle_build
