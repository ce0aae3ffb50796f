// SPDX-License-Identifier: Apache-2.0
#include "aot/kernel_variants.hpp"
#include "engine/defines.hpp"

#include <gtest/gtest.h>

namespace prewarm::aot {
namespace {

TEST(EngineAgreement, OptionsRenderAsEngineDefines)
{
  const std::map<std::string, std::string> cases[] = {
    {},
    {{"WG", "64"}},
    {{"TILE", "16"}, {"TRANSPOSE_B", "1"}},
    {{"TILE", "16"}, {"TRANSPOSE_B", "0"}, {"PRECISION_FP16", ""}, {"COMPUTE_HALF", ""}},
  };
  for (const auto& defines : cases) {
    engine::Defines d;
    for (const auto& [name, value] : defines) {
      if (value.empty()) {
        d.flag(name);
      } else {
        d.set(name, value);
      }
    }
    EXPECT_EQ(render_options(defines), d.options());
  }
}

} // namespace
} // namespace prewarm::aot
