// SPDX-License-Identifier: Apache-2.0
#include "level_zero/check.hpp"

#include <gtest/gtest.h>

namespace prewarm::level_zero {
namespace {

Status
failing_call()
{
  PW_ZE_CHECK(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  return {};
}

TEST(ZeCheck, NamesTheCallAndTheResult)
{
  auto status = failing_call();
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("ZE_RESULT_ERROR_INVALID_NATIVE_BINARY"), std::string::npos);
  EXPECT_NE(status.error().message().find("0x7800000f"), std::string::npos) << status.error().message();
}

TEST(ZeCheck, UnknownResultAsHex)
{
  EXPECT_EQ(result_name(static_cast<ze_result_t>(0x12345)), "ze_result_t 0x00012345");
  EXPECT_EQ(result_name(ZE_RESULT_SUCCESS), "ZE_RESULT_SUCCESS");
}

} // namespace
} // namespace prewarm::level_zero
