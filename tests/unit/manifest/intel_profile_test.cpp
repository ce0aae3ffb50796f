// SPDX-License-Identifier: Apache-2.0
// Intel key profiles (manifests/intel-profiles): each embedded profile reads,
// names a registry target whose ids and IP version it agrees with, and a
// value without its source, an unknown key or a malformed id is an error
// naming the file, line and field.
#include "manifest/intel_profile.hpp"
#include "manifest/target_registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

using namespace prewarm;
using namespace prewarm::manifest;

namespace {

TEST(IntelProfile, EveryIntelCardTargetOfTheIssueHasAProfileThatAgreesWithTheRegistry)
{
  auto registry = TargetRegistry::embedded();
  ASSERT_TRUE(registry);
  for (const char* name : {"arc-b580", "arc-a770", "arc-a380", "mtl-igpu", "mtl-u-igpu"}) {
    auto profile = embedded_intel_profile(name);
    ASSERT_TRUE(profile) << profile.error().message();
    ASSERT_TRUE(profile->has_value()) << name;
    const auto& p = **profile;
    const auto* target = registry->find(name);
    ASSERT_NE(target, nullptr);
    EXPECT_NE(std::ranges::find(target->pci_ids, p.device_id.value), target->pci_ids.end()) << name;
    EXPECT_EQ(p.ip_version.value, target->ip_version) << name;
    if (!target->pci_revision.empty()) {
      EXPECT_EQ(p.revision.value, target->pci_revision) << name;
    }
    EXPECT_EQ(p.recorder_product, target->ocloc_device) << name;
    EXPECT_FALSE(p.device_name.value.empty());
    EXPECT_FALSE(p.packages.empty());
    EXPECT_TRUE(p.level_zero_bindless.value) << name; // BMG, DG2, MTL: NEO's release helpers
    EXPECT_FALSE(p.opencl_bindless.value) << name;
    const bool pci_bus_info = std::ranges::any_of(p.opencl_extensions_added,
                                                  [](const auto& e) { return e.name == "cl_khr_pci_bus_info"; });
    EXPECT_TRUE(pci_bus_info) << name;
  }
  auto none = embedded_intel_profile("h100");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

constexpr std::string_view k_minimal = R"(version: 1
target: arc-b580
recorder: {product: bmg, device_id: "0xe20b"}
driver: {packages: {libigc2: 2.40.14-1}, source: test}
key:
  device_id: {value: "0xe20b", source: a}
  revision: {value: "0x00", source: b}
  ip_version: {value: "20.1.0", source: c}
  feature_table: {value: virtual-device, source: d}
  workaround_table: {value: "20.00.00.00.", source: e}
opencl:
  bindless: {value: false, source: f}
  extensions:
    add:
      - {name: cl_khr_pci_bus_info, after: end, when: always, source: g}
level_zero:
  bindless: {value: true, source: h}
device_name: {value: "Intel(R) Arc(TM) B580 Graphics", source: i}
)";

std::string
replaced(std::string_view from, std::string_view to)
{
  std::string text(k_minimal);
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return text;
}

TEST(IntelProfile, MinimalProfileReads)
{
  auto profile = parse_intel_profile(k_minimal, "p.yaml");
  ASSERT_TRUE(profile) << profile.error().message();
  EXPECT_EQ(profile->workaround_table.value, "20.00.00.00.");
  EXPECT_EQ(profile->workaround_table.source, "e");
  ASSERT_EQ(profile->opencl_extensions_added.size(), 1u);
  EXPECT_EQ(profile->opencl_extensions_added[0].after, "end");
  EXPECT_TRUE(profile->unknown.empty());
}

TEST(IntelProfile, ErrorsNameFileLineAndField)
{
  const std::pair<std::string, std::string> cases[] = {
    {replaced("{value: \"0x00\", source: b}", "{value: \"0x00\", source: \"\"}"), "key.revision.source"},
    {replaced("{value: \"0x00\", source: b}", "{value: \"0x00\"}"), "key.revision"},
    {replaced("\"0xe20b\", source: a", "\"0xE20B\", source: a"), "key.device_id.value"},
    {replaced("ip_version: {value: \"20.1.0\"", "ip_version: {value: \"20.1\""), "key.ip_version.value"},
    {replaced("when: always", "when: sometimes"), "opencl.extensions.add[0].when"},
    {replaced("device_name:", "device_nam:"), "device_nam"},
    {replaced("value: virtual-device", "value: b3.39"), "key.feature_table.value"},
  };
  for (const auto& [text, expected] : cases) {
    auto profile = parse_intel_profile(text, "p.yaml");
    ASSERT_FALSE(profile) << expected;
    EXPECT_NE(profile.error().message().find(expected), std::string::npos) << profile.error().message();
    EXPECT_NE(profile.error().message().find("p.yaml:"), std::string::npos) << profile.error().message();
  }
}

} // namespace
