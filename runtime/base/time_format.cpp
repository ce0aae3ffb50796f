// SPDX-License-Identifier: Apache-2.0
#include "base/time_format.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

namespace prewarm {

namespace {

bool
parse_uint(std::string_view text, long long& out)
{
  if (text.empty()) {
    return false;
  }
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

} // namespace

std::string
format_rfc3339(SysSeconds t)
{
  const auto days = std::chrono::floor<std::chrono::days>(t);
  const std::chrono::year_month_day ymd(days);
  const std::chrono::hh_mm_ss hms(t - days);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z",
                     static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()),
                     hms.hours().count(),
                     hms.minutes().count(),
                     hms.seconds().count());
}

Result<SysSeconds>
parse_rfc3339(std::string_view text)
{
  const auto bad = [&] {
    return fail(Errc::usage, fmt::format("{}: not a time of the form 2026-11-21T09:30:00Z", in_quotes(text)));
  };
  // YYYY-MM-DDTHH:MM:SSZ
  if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text[19] != 'Z') {
    return bad();
  }
  long long y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!parse_uint(text.substr(0, 4), y) || !parse_uint(text.substr(5, 2), mo) ||
      !parse_uint(text.substr(8, 2), d) || !parse_uint(text.substr(11, 2), h) ||
      !parse_uint(text.substr(14, 2), mi) || !parse_uint(text.substr(17, 2), s)) {
    return bad();
  }
  const std::chrono::year_month_day ymd{std::chrono::year(static_cast<int>(y)),
                                        std::chrono::month(static_cast<unsigned>(mo)),
                                        std::chrono::day(static_cast<unsigned>(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 59) {
    return bad();
  }
  return SysSeconds(std::chrono::sys_days(ymd)) + std::chrono::hours(h) +
         std::chrono::minutes(mi) + std::chrono::seconds(s);
}

Result<std::chrono::seconds>
parse_duration(std::string_view text)
{
  long long n = 0;
  if (text.size() < 2 || !parse_uint(text.substr(0, text.size() - 1), n)) {
    return fail(Errc::usage, fmt::format("{}: not a duration such as 90d, 12h, 15m or 30s", in_quotes(text)));
  }
  // 100 years: longer is a mistake, and `now + skew` must not overflow (a
  // wrapped sum would turn a generous skew into a negative one).
  constexpr long long k_max_seconds = 36500LL * 86400;
  const long long unit = text.back() == 'd' ? 86400 : text.back() == 'h' ? 3600 : text.back() == 'm' ? 60 : 1;
  if (n > k_max_seconds / unit) {
    return fail(Errc::usage, fmt::format("{}: longer than 100 years (36500d)", in_quotes(text)));
  }
  switch (text.back()) {
  case 'd':
    return std::chrono::seconds(n * 86400);
  case 'h':
    return std::chrono::seconds(n * 3600);
  case 'm':
    return std::chrono::seconds(n * 60);
  case 's':
    return std::chrono::seconds(n);
  default:
    return fail(Errc::usage, fmt::format("{}: not a duration such as 90d, 12h, 15m or 30s", in_quotes(text)));
  }
}

Result<std::optional<SysSeconds>>
source_date_epoch()
{
  const char* value = std::getenv("SOURCE_DATE_EPOCH");
  if (value == nullptr || *value == '\0') {
    return std::optional<SysSeconds>{};
  }
  long long n = 0;
  if (!parse_uint(value, n)) {
    return fail(Errc::usage, fmt::format("SOURCE_DATE_EPOCH={}: not a number of seconds", in_quotes(value)));
  }
  return std::optional<SysSeconds>(SysSeconds(std::chrono::seconds(n)));
}

SysSeconds
now_seconds()
{
  return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
}

} // namespace prewarm
