// SPDX-License-Identifier: Apache-2.0
// The bundle serial, and where it came from (for `build --show-config`).
// The runtime refuses a lower serial than the one installed on a channel, and
// the same serial with another manifest (rollback protection), so the default
// grows on its own: the build time in seconds since 1970, SOURCE_DATE_EPOCH
// when set (reproducible builds and CI shards agree on it), else the clock.
// Precedence: --serial > the manifest's bundle.serial > SOURCE_DATE_EPOCH > clock.
#pragma once

#include "base/error.hpp"
#include "manifest/manifest.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace prewarm::build {

struct SerialChoice
{
  std::uint64_t value = 0;
  std::string origin; // "--serial", "bundle.serial in m.yaml", "SOURCE_DATE_EPOCH", "the clock"
};

// Errc::usage when SOURCE_DATE_EPOCH is set but not a decimal number.
Result<SerialChoice> choose_serial(std::optional<std::uint64_t> flag, const manifest::Manifest& manifest);

} // namespace prewarm::build
