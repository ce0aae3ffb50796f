// SPDX-License-Identifier: Apache-2.0
// The card's internal options, made from what NEO traced on the virtual
// device (tests/data/neo_key) and a key profile: where NEO 26.27 puts what a
// card adds (cl_device_caps.cpp:165-183 and sharing_factory.h: GL, then VA,
// then the format query, then cl_khr_pci_bus_info; module_imp.cpp:197 and
// 1206-1207: bindless before -ze-intel-has-buffer-offset-arg), and which key
// fields synthesis changes.
#include "manifest/intel_profile.hpp"
#include "virtual_device/neo_extension_list.hpp"
#include "virtual_device/neo_synthesis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using namespace prewarm;
using namespace prewarm::virtual_device::neo;
namespace fs = std::filesystem;

namespace {

const fs::path k_data = fs::path(PREWARM_TEST_DATA) / "neo_key";

// The traced entries of a data directory (its entry files are not kept: `entries` lists them).
Result<std::vector<RecordedEntry>>
traced(std::string_view dir, IpVersion ip, CacheApi api)
{
  PW_ASSIGN(auto entries, read_traced_entries(k_data / dir, ip));
  std::vector<RecordedEntry> out;
  for (auto& entry : entries) {
    const auto path = cached_file_path(entry.name, api);
    out.push_back({std::move(entry), api, path});
  }
  return out;
}

// The device's CL_DEVICE_EXTENSIONS from the list NEO traced for a program
// without -cl-std (the device's list as is: oclc_extensions.cpp:142-162).
std::string
device_extensions(const RecordedEntry& entry)
{
  const auto place = find_extension_list(entry.traced.inputs.internal_options);
  EXPECT_TRUE(place);
  std::string list = place ? place->list.substr(std::string_view(" -cl-ext=-all,").size()) : "";
  std::ranges::replace(list, ',', ' ');
  std::erase(list, '+');
  return list;
}

CardKey
key_for(std::string_view target, std::string_view device)
{
  auto profile = manifest::embedded_intel_profile(target);
  EXPECT_TRUE(profile && profile->has_value());
  auto key = card_key(**profile, device);
  EXPECT_TRUE(key) << key.error().message();
  return *key;
}

CardKey
b580()
{
  auto recorded = traced("bmg-opencl", {20, 1, 0}, CacheApi::opencl);
  EXPECT_TRUE(recorded && !recorded->empty());
  return key_for("arc-b580", device_extensions(recorded->front()));
}

TEST(CardInternalOptions, OpenClListsTheCardsExtensionsWhereNeoDoes)
{
  auto recorded = traced("bmg-opencl", {20, 1, 0}, CacheApi::opencl);
  ASSERT_TRUE(recorded) << recorded.error().message();
  ASSERT_FALSE(recorded->empty());
  const auto& traced = recorded->front().traced.inputs.internal_options;
  ASSERT_EQ(traced.find("cl_khr_pci_bus_info"), std::string::npos);
  auto options = card_internal_options(traced, recorded->front().traced.inputs.options, CacheApi::opencl, b580());
  ASSERT_TRUE(options) << options.error().message();
  ASSERT_EQ(options->size(), 2u); // without and with libva
  const auto& plain = (*options)[0];
  const auto& libva = (*options)[1];
  EXPECT_TRUE(plain.ends_with("+cl_khr_gl_msaa_sharing,+cl_intel_sharing_format_query,+cl_khr_pci_bus_info "));
  EXPECT_EQ(plain.find("cl_intel_va_api_media_sharing"), std::string::npos);
  EXPECT_TRUE(libva.ends_with("+cl_khr_gl_msaa_sharing,+cl_intel_va_api_media_sharing,+cl_intel_sharing_format_query,"
                              "+cl_khr_pci_bus_info "));
  // Nothing else moves: the recorded text with the insertions only.
  auto expected = traced;
  expected.replace(expected.size() - 1, 1, ",+cl_khr_pci_bus_info ");
  EXPECT_EQ(plain, expected);
}

TEST(CardInternalOptions, AMissingAnchorNamesTheProfileField)
{
  auto profile = manifest::embedded_intel_profile("arc-b580");
  ASSERT_TRUE(profile && profile->has_value());
  auto key = card_key(**profile, "cl_khr_fp16");
  ASSERT_FALSE(key);
  EXPECT_NE(key.error().message().find("opencl.extensions.add cl_intel_va_api_media_sharing"), std::string::npos)
    << key.error().message();
}

TEST(CardInternalOptions, LevelZeroBindlessGoesBeforeTheBufferOffsetOption)
{
  auto recorded = traced("bmg-level-zero", {20, 1, 0}, CacheApi::level_zero);
  ASSERT_TRUE(recorded && !recorded->empty());
  const auto& traced = recorded->front().traced.inputs.internal_options;
  auto options = card_internal_options(traced, "", CacheApi::level_zero, b580());
  ASSERT_TRUE(options) << options.error().message();
  ASSERT_EQ(options->size(), 1u);
  EXPECT_EQ(options->front(), "-cl-intel-use-bindless-mode -cl-intel-use-bindless-advanced-mode " + traced);
  auto not_bindless = b580();
  not_bindless.level_zero_bindless = false;
  EXPECT_EQ(card_internal_options(traced, "", CacheApi::level_zero, not_bindless)->front(), traced);
}

TEST(CardInputs, OnlyTheCardsFieldsChange)
{
  auto recorded = traced("mtl-h-opencl", {12, 71, 4}, CacheApi::opencl);
  ASSERT_TRUE(recorded && recorded->size() == 1);
  const auto key = key_for("mtl-igpu", device_extensions(recorded->front()));
  auto inputs = card_inputs(recorded->front(), key);
  ASSERT_TRUE(inputs);
  ASSERT_EQ(inputs->size(), 2u);
  const auto& before = recorded->front().traced.inputs;
  const auto& after = inputs->front();
  EXPECT_EQ(after.platform.revision, 0x08);
  EXPECT_EQ(after.platform.device_id, 0x7d55);
  EXPECT_EQ(after.ip_version, (IpVersion{12, 71, 4}));
  EXPECT_EQ(after.input, before.input);
  EXPECT_EQ(after.feature_table, before.feature_table); // "virtual-device" in the profile
  auto same_revision = after;
  same_revision.platform.revision = before.platform.revision;
  EXPECT_EQ(first_difference(before, same_revision), "internal options");
  EXPECT_NE(cached_file_name(after), recorded->front().traced.name);
}

} // namespace
