// SPDX-License-Identifier: Apache-2.0
#include "base/error.hpp"

#include <gtest/gtest.h>

namespace prewarm {
namespace {

Result<int>
parse_positive(int v)
{
  if (v <= 0) {
    return fail(Errc::usage, "not positive", "E_TEST");
  }
  return v;
}

Result<int>
doubled(int v)
{
  PW_ASSIGN_CTX(const int x, "doubling", parse_positive(v));
  return 2 * x;
}

Status
check(int v)
{
  PW_TRY_CTX("checking", doubled(v));
  return {};
}

TEST(Error, MacrosPropagateAndAddContext)
{
  EXPECT_EQ(*doubled(3), 6);
  const auto bad = check(-1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "checking: doubling: not positive");
  EXPECT_EQ(bad.error().code(), "E_TEST");
  EXPECT_EQ(bad.error().category(), Errc::usage);
}

TEST(Error, CategoriesMapToDocumentedExitCodes)
{
  EXPECT_EQ(exit_code(Errc::failed), 1);
  EXPECT_EQ(exit_code(Errc::internal), 1);
  EXPECT_EQ(exit_code(Errc::usage), 2);
  EXPECT_EQ(exit_code(Errc::verify), 3);
  EXPECT_EQ(exit_code(Errc::not_applicable), 4);
}

} // namespace
} // namespace prewarm
