// SPDX-License-Identifier: Apache-2.0
// Times in signed text: RFC 3339 UTC with seconds, one spelling only
// ("2026-11-21T09:30:00Z").
#pragma once

#include "base/error.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm {

using SysSeconds = std::chrono::sys_seconds;

std::string format_rfc3339(SysSeconds t);
Result<SysSeconds> parse_rfc3339(std::string_view text);

// "30d", "12h", "15m", "90s" (one unit; used for expiry and clock skew); at
// most 100 years, so adding one to a time cannot overflow.
Result<std::chrono::seconds> parse_duration(std::string_view text);

// SOURCE_DATE_EPOCH if set (it must be a plain decimal integer), else nullopt.
Result<std::optional<SysSeconds>> source_date_epoch();

SysSeconds now_seconds();

} // namespace prewarm
