// SPDX-License-Identifier: Apache-2.0
// The bundle's header (channel, serial, issued-at, expires), decided once,
// before the first job runs, and used for everything that shows or writes it
// (`build --show-config`, the bundle, the expiry check).
//
// The serial, and where it came from: the runtime refuses a lower serial
// than the one installed on a channel, and the same serial with another
// manifest (rollback protection), so the default grows on its own: the build
// time in seconds since 1970, SOURCE_DATE_EPOCH when set (reproducible builds
// and CI shards agree on it), else the clock.
// Precedence: --serial > the manifest's bundle.serial > SOURCE_DATE_EPOCH > clock.
// issued-at is SOURCE_DATE_EPOCH when set, else the clock; expires is
// issued-at + bundle.expires.
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "manifest/manifest.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace prewarm::bundle_build {

struct SerialChoice
{
  std::uint64_t value = 0;
  std::string origin; // "--serial", "bundle.serial in m.yaml", "SOURCE_DATE_EPOCH", "the clock"
};

struct BundleHeader
{
  std::string channel;
  SerialChoice serial;
  std::optional<SysSeconds> source_date_epoch; // also the archive entries' time
  SysSeconds issued_at{};
  SysSeconds expires{};
};

// `channel` and `serial` are the flags (empty: the manifest's, then the
// defaults above); `now` is the build's clock. Errc::usage for a bad
// SOURCE_DATE_EPOCH.
Result<BundleHeader> decide_bundle_header(const std::optional<std::string>& channel,
                                          std::optional<std::uint64_t> serial, const manifest::Manifest& manifest,
                                          SysSeconds now);

} // namespace prewarm::bundle_build
