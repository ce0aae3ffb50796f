// SPDX-License-Identifier: Apache-2.0
// The engine's SPIR-V source for Level Zero, with the real ocloc.
#include "aot/ocloc.hpp"
#include "aot/spirv_compiler.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace prewarm::aot {
namespace {

constexpr std::string_view k_source = "__kernel void scale(__global float* x) { x[get_global_id(0)] *= FACTOR; }";

TEST(OclocSpirvCompiler, CompilesForTheDevicesPciIdAndNamesADeviceWithoutOne)
{
  if (auto ocloc = Ocloc::locate(); !ocloc) {
    GTEST_SKIP() << "ocloc not usable: " << ocloc.error().message();
  }
  auto compile = ocloc_spirv_compiler();
  const engine::ProgramText program{"test_only_scale.cl", k_source, "-DFACTOR=2.0f"};
  const engine::SessionDevice a380{"test_only A380", {{"vendor", "intel"}, {"pci-id", "0x56a5"}}};
  auto spirv = compile(program, a380);
  ASSERT_TRUE(spirv) << spirv.error().message();
  ASSERT_GE(spirv->size(), 4u);
  std::uint32_t magic = 0;
  std::memcpy(&magic, spirv->data(), sizeof magic);
  EXPECT_EQ(magic, 0x07230203u); // SPIR-V, little-endian

  const engine::SessionDevice anonymous{"test_only device", {{"vendor", "intel"}}};
  auto refused = compile(program, anonymous);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("test_only device: the device reports no PCI id"), std::string::npos)
    << refused.error().message();
}

} // namespace
} // namespace prewarm::aot
