// SPDX-License-Identifier: Apache-2.0
// A bundle that would be expired, or expire within a day, when written is
// refused by name (E_EXPIRES_SOON, exit 2) or, when allowed, written with a
// warning; a day or more of validity passes.
#include "pack/bundle_expiry.hpp"

#include <gtest/gtest.h>

namespace prewarm::pack {
namespace {

using namespace std::chrono_literals;

const SysSeconds k_now{std::chrono::sys_days{std::chrono::year{2026} / 6 / 1}};

TEST(BundleExpiry, ADayOrMoreOfValidityPasses)
{
  EXPECT_TRUE(check_bundle_expiry("the bundle", k_now, k_now + 24h, k_now, ExpiryPolicy::refuse));
  EXPECT_TRUE(check_bundle_expiry("the bundle", k_now - 89 * 24h, k_now + 24h, k_now, ExpiryPolicy::refuse));
}

TEST(BundleExpiry, ExpiredOrExpiringSoonIsRefusedNamingItsInputs)
{
  for (const auto expires : {k_now - 1s, k_now, k_now + 23h}) {
    const auto checked = check_bundle_expiry("the bundle", k_now - 7 * 24h, expires, k_now, ExpiryPolicy::refuse);
    ASSERT_FALSE(checked);
    EXPECT_EQ(checked.error().code(), "E_EXPIRES_SOON");
    EXPECT_EQ(checked.error().category(), Errc::usage);
    EXPECT_NE(checked.error().message().find("SOURCE_DATE_EPOCH"), std::string::npos) << checked.error().message();
    EXPECT_NE(checked.error().message().find("bundle.expires"), std::string::npos) << checked.error().message();
    EXPECT_NE(checked.error().message().find("--allow-expired"), std::string::npos) << checked.error().message();
  }
}

TEST(BundleExpiry, AllowedIsAWarningNotAnError)
{
  EXPECT_TRUE(check_bundle_expiry("the bundle", k_now - 90 * 24h, k_now - 1h, k_now, ExpiryPolicy::warn));
}

} // namespace
} // namespace prewarm::pack
