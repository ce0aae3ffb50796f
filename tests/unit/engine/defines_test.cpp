// SPDX-License-Identifier: Apache-2.0
#include "engine/defines.hpp"
#include "engine/launch.hpp"

#include <gtest/gtest.h>

namespace prewarm::engine {
namespace {

TEST(Defines, RenderSortedByNameWhateverTheInsertionOrder)
{
  Defines a;
  a.set("TILE", 16).flag("PRECISION_FP16").set("B", "x");
  Defines b;
  b.set("B", "x").set("TILE", 16).flag("PRECISION_FP16");
  EXPECT_EQ(a.options(), "-DB=x -DPRECISION_FP16 -DTILE=16");
  EXPECT_EQ(a.options(), b.options());
}

TEST(Defines, LaterValueReplacesEarlier)
{
  Defines d;
  d.set("TILE", 8).set("TILE", 16);
  EXPECT_EQ(d.options(), "-DTILE=16");
  EXPECT_TRUE(Defines().options().empty());
}

TEST(LaunchGeometry, LocalTextAndRoundUp)
{
  EXPECT_EQ(LaunchGeometry::linear(128, 64).local_text(), "64");
  EXPECT_EQ(LaunchGeometry::grid(32, 48, 16, 16).local_text(), "16x16");
  EXPECT_EQ(LaunchGeometry::grid({32, 48, 3}, {16, 16, 1}).local_text(), "16x16x1");
  EXPECT_EQ(LaunchGeometry::linear(100, 0).local_text(), "auto");
  EXPECT_EQ(round_up(100, 16), 112u);
  EXPECT_EQ(round_up(112, 16), 112u);
}

} // namespace
} // namespace prewarm::engine
