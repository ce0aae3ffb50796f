// SPDX-License-Identifier: Apache-2.0
#include "manifest/suggest.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace prewarm::manifest {
namespace {

TEST(Suggest, EditDistance)
{
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("fp16", "fp16"), 0u);
  EXPECT_EQ(edit_distance("fp61", "fp16"), 2u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Suggest, NearestOnlyWhenPlausible)
{
  const std::vector<std::string> names{"arc-a770", "arc-a750", "h100"};
  EXPECT_EQ(nearest_name("arc-a77", names), "arc-a770");
  EXPECT_EQ(nearest_name("h10", names), "h100");
  EXPECT_EQ(nearest_name("completely-different", names), std::nullopt);
  EXPECT_EQ(did_you_mean("zzzzzzzz", names), "");
  EXPECT_EQ(did_you_mean("arc-a75", names), " (did you mean 'arc-a750'?)");
  EXPECT_EQ(did_you_mean("arc-a7x0", names), " (did you mean 'arc-a770'?)"); // tie: the first listed
}

} // namespace
} // namespace prewarm::manifest
