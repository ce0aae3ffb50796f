// SPDX-License-Identifier: Apache-2.0
#include "base/time_format.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace prewarm {
namespace {

TEST(Rfc3339, RoundTrips)
{
  const auto t = parse_rfc3339("2026-11-21T09:30:05Z");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(format_rfc3339(*t), "2026-11-21T09:30:05Z");
  EXPECT_EQ(t->time_since_epoch().count(), 1795253405);
}

TEST(Rfc3339, RejectsOtherSpellings)
{
  for (const char* bad : {"2026-11-21T09:30:05+00:00", "2026-11-21 09:30:05Z", "2026-02-30T00:00:00Z",
                          "2026-11-21T24:00:00Z", "2026-11-21T09:30:05.1Z", "2026-1-21T09:30:05Z", ""}) {
    EXPECT_FALSE(parse_rfc3339(bad)) << bad;
  }
}

TEST(Duration, ParsesUnits)
{
  EXPECT_EQ(parse_duration("90d")->count(), 90 * 86400);
  EXPECT_EQ(parse_duration("12h")->count(), 12 * 3600);
  EXPECT_EQ(parse_duration("15m")->count(), 900);
  EXPECT_EQ(parse_duration("30s")->count(), 30);
  EXPECT_FALSE(parse_duration("30"));
  EXPECT_FALSE(parse_duration("d"));
  EXPECT_FALSE(parse_duration("-3d"));
  EXPECT_FALSE(parse_duration("3w"));
}

TEST(Duration, LongerThanAHundredYearsIsAUsageErrorNotAnOverflow)
{
  EXPECT_EQ(parse_duration("36500d")->count(), 36500LL * 86400);
  for (const auto* text : {"36501d", "999999999999d", "876001h", "9223372036854775807s", "99999999999999999999d"}) {
    SCOPED_TRACE(text);
    const auto parsed = parse_duration(text);
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().category(), Errc::usage);
  }
}

TEST(SourceDateEpoch, ReadsAndValidates)
{
  ::setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  auto t = source_date_epoch();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->has_value());
  EXPECT_EQ((*t)->time_since_epoch().count(), 1700000000);
  ::setenv("SOURCE_DATE_EPOCH", "17e8", 1);
  EXPECT_FALSE(source_date_epoch());
  ::unsetenv("SOURCE_DATE_EPOCH");
  t = source_date_epoch();
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->has_value());
}

} // namespace
} // namespace prewarm
