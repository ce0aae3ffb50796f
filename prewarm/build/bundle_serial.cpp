// SPDX-License-Identifier: Apache-2.0
#include "build/bundle_serial.hpp"

#include "base/time_format.hpp"

#include <fmt/format.h>

namespace prewarm::build {

Result<SerialChoice>
choose_serial(std::optional<std::uint64_t> flag, const manifest::Manifest& manifest)
{
  if (flag) {
    return SerialChoice{*flag, "--serial"};
  }
  if (manifest.bundle.serial) {
    return SerialChoice{*manifest.bundle.serial, fmt::format("bundle.serial in {}", manifest.source_name)};
  }
  PW_ASSIGN(const auto epoch, source_date_epoch());
  if (epoch) {
    return SerialChoice{static_cast<std::uint64_t>(epoch->time_since_epoch().count()),
                        "SOURCE_DATE_EPOCH (default: the build time)"};
  }
  return SerialChoice{static_cast<std::uint64_t>(now_seconds().time_since_epoch().count()),
                      "the clock (default: the build time; SOURCE_DATE_EPOCH overrides)"};
}

} // namespace prewarm::build
