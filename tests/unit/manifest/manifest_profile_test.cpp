// SPDX-License-Identifier: Apache-2.0
// A manifest target naming its card's key profile (manifest/intel_profile.hpp):
// read at plan time, every error naming FILE:LINE:COLUMN and the field, or
// the profile's own line.
#include "base/files.hpp"
#include "test_inputs.hpp"

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

namespace prewarm::manifest {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string
profile_text(std::string_view target, std::string_view device_id, std::string_view name)
{
  return fmt::format(R"(version: 1
target: {0}
recorder: {{product: bmg, device_id: "{1}"}}
driver: {{packages: {{}}, source: "test"}}
key:
  device_id: {{value: "{1}", source: "test"}}
  revision: {{value: "0x00", source: "test"}}
  ip_version: {{value: "20.1.0", source: "test"}}
  feature_table: {{value: virtual-device, source: "test"}}
  workaround_table: {{value: virtual-device, source: "test"}}
opencl:
  bindless: {{value: false, source: "test"}}
  extensions: {{add: [], measured: {{value: "cl_khr_fp16 cl_khr_pci_bus_info", source: "test"}}}}
level_zero:
  bindless: {{value: true, source: "test"}}
device_name: {{value: "{2}", source: "measured on a card"}}
)",
                     target, device_id, name);
}

class ManifestProfile : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = TempDir::create("prewarm-profile-test-");
    ASSERT_TRUE(dir);
    m_dir.emplace(std::move(*dir));
    write("b580.yaml", profile_text("arc-b580", "0xe20b", "Intel(R) Arc(TM) B580 Graphics [measured]"));
  }

  void write(const std::string& name, const std::string& text) const
  {
    ASSERT_TRUE(write_file_atomic(m_dir->path() / name, text, 0644, Durability::none));
  }

  Result<Manifest> parse(const std::string& targets) const
  {
    const auto text = "version: 1\nmodels:\n  - name: qwen\n    preset: qwen2.5-0.5b\nprecisions: [fp32]\n" + targets;
    return parse_manifest(text, "m.yaml", m_dir->path(), ManifestInputs{testing::registry(), testing::presets()});
  }

  std::string error(const std::string& targets) const
  {
    auto parsed = parse(targets);
    EXPECT_FALSE(parsed) << targets;
    if (!parsed) {
      EXPECT_EQ(parsed.error().code(), "E_MANIFEST");
    }
    return parsed ? std::string() : parsed.error().message();
  }

  std::string path(const std::string& name) const { return (m_dir->path() / name).string(); }

  std::optional<TempDir> m_dir;
};

TEST_F(ManifestProfile, AnIntelTargetNamesItsProfileRelativeToTheManifest)
{
  auto m = parse("targets: [cpu, {name: arc-b580, profile: b580.yaml}]\n");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->targets, (std::vector<std::string>{"cpu", "arc-b580"}));
  ASSERT_NE(m->find_profile("arc-b580"), nullptr);
  EXPECT_EQ(m->find_profile("arc-b580")->device_name.value, "Intel(R) Arc(TM) B580 Graphics [measured]");
  ASSERT_TRUE(m->find_profile("arc-b580")->opencl_extensions_measured);
  EXPECT_EQ(m->find_profile("arc-b580")->opencl_extensions_measured->value, "cl_khr_fp16 cl_khr_pci_bus_info");
  EXPECT_EQ(m->find_profile("cpu"), nullptr);
  // A map without a profile is a plain target.
  auto plain = parse("targets: [{name: arc-b580}]\n");
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_EQ(plain->find_profile("arc-b580"), nullptr);
}

TEST_F(ManifestProfile, ErrorsNameTheManifestLineAndTheProfile)
{
  EXPECT_THAT(error("targets: [{name: arc-b580, profile: missing.yaml}]\n"),
              StartsWith("m.yaml:6:37: targets[0].profile: reading Intel key profile " + path("missing.yaml")));
  EXPECT_THAT(error("targets: [{name: cpu, profile: b580.yaml}]\n"),
              StartsWith("m.yaml:6:32: targets[0].profile: target 'cpu' is not an Intel GPU"));
  write("a770.yaml", profile_text("arc-a770", "0x56a0", "A770"));
  EXPECT_THAT(error("targets: [{name: arc-b580, profile: a770.yaml}]\n"),
              HasSubstr(path("a770.yaml") + " is the profile of target 'arc-a770', not of 'arc-b580'"));
  write("wrong-id.yaml", profile_text("arc-b580", "0x56a0", "B580?"));
  EXPECT_THAT(error("targets: [{name: arc-b580, profile: wrong-id.yaml}]\n"),
              HasSubstr("was measured on PCI id 0x56a0, which target 'arc-b580' does not list (0xe20b)"));
  EXPECT_THAT(error("targets: [arc-b580, {name: arc-b580, profile: b580.yaml}]\n"),
              StartsWith("m.yaml:6:28: targets[1].name: duplicate 'arc-b580' (first at 6:11)"));
  EXPECT_THAT(error("targets: [{name: arc-b580, profil: b580.yaml}]\n"), HasSubstr("unknown key 'profil'"));
  EXPECT_THAT(error("targets: [{name: arc-b58}]\n"), StartsWith("m.yaml:6:18: targets[0].name: unknown target"));
  EXPECT_THAT(error("targets: []\n"), StartsWith("m.yaml:6:10: targets"));
  // An error inside the profile names the profile's own line.
  auto bad = profile_text("arc-b580", "0xe20b", "B580");
  bad.replace(bad.find("\"0x00\""), 6, "\"0\"");
  write("bad.yaml", bad);
  EXPECT_THAT(error("targets: [{name: arc-b580, profile: bad.yaml}]\n"),
              HasSubstr("m.yaml:6:37: targets[0].profile: " + path("bad.yaml") + ":7:21: key.revision.value: expected"));
}

} // namespace
} // namespace prewarm::manifest
