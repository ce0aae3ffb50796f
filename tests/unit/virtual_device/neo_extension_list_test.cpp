// SPDX-License-Identifier: Apache-2.0
// The -cl-ext= list as NEO 26.27 constructs it, against vectors that are not
// ours: the expected strings of compute-runtime's own unit tests (tag
// 26.27.39122.14, file and line quoted at each), NEO's traces
// (tests/data/neo_key), and a real card's internal options quoted in public
// code. Then, per language version and per target, the card's internal
// options: the lists below are written out by hand from NEO's rules
// (opencl/source/program/build.cpp:85-90, shared/source/helpers/compiler_options_parser.cpp:116-139,
// opencl/source/cl_device/cl_device_caps.cpp:165-183), not produced by the code under test.
#include "manifest/intel_profile.hpp"
#include "virtual_device/neo_extension_list.hpp"
#include "virtual_device/neo_synthesis.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace prewarm;
using namespace prewarm::virtual_device::neo;

namespace {

// compute-runtime shared/test/unit_test/helpers/compiler_options_parser_tests.cpp:68-78
TEST(NeoVectors, LanguageVersionAsNeoReadsIt)
{
  EXPECT_LT(opencl_c_version("-cl-std=CL1.2").major, 3u);
  EXPECT_EQ(opencl_c_version("-cl-std=CL2.0").major, 2u);
  EXPECT_EQ(opencl_c_version("-cl-std=CL3.0").major, 3u);
  EXPECT_EQ(opencl_c_version("-cl-std=CL4.0").major, 4u);
  // compiler_options_parser_tests.cpp:110-114: no -cl-std, no features or additions
  EXPECT_EQ(opencl_c_version("-other-option").major, 0u);
  // C++ for OpenCL: NEO's stream reads no number after "CL" (compiler_options_parser.cpp:25-36)
  EXPECT_EQ(opencl_c_version("-cl-std=CLC++").major, 0u);
  EXPECT_EQ(opencl_c_version("-cl-std=CLC++2021").major, 0u);
  const auto v11 = opencl_c_version("-DX=1 -cl-std=CL1.1");
  EXPECT_EQ(v11.major, 1u);
  EXPECT_EQ(v11.minor, 1u);
}

// compute-runtime opencl/test/unit_test/platform/platform_tests.cpp:193-205
TEST(NeoVectors, FeaturesOnlyList)
{
  EXPECT_EQ(compiler_extensions({}, {"custom_feature"}, "-cl-std=CL3.0", ""), " -cl-ext=-all,+custom_feature ");
  EXPECT_EQ(compiler_extensions({}, {"custom_feature", "other_extra_feature"}, "-cl-std=CL3.0", ""),
            " -cl-ext=-all,+custom_feature,+other_extra_feature ");
}

// compute-runtime opencl/test/unit_test/program/program_tests.cpp:1108-1124 (no
// -cl-std: neither features nor 3d_image_writes) and 1143-1162 (CL2.0: the
// list ends "+cl_khr_3d_image_writes ")
TEST(NeoVectors, OpenClC20AppendsImageWritesLast)
{
  const std::vector<std::string> device{"ext1", "ext2"};
  EXPECT_EQ(compiler_extensions(device, {"__opencl_c_images"}, "", ""), " -cl-ext=-all,+ext1,+ext2 ");
  const auto cl20 = compiler_extensions(device, {"__opencl_c_images"}, "-cl-std=CL2.0", "");
  EXPECT_TRUE(cl20.ends_with("+cl_khr_3d_image_writes ")) << cl20;
  EXPECT_EQ(cl20, " -cl-ext=-all,+ext1,+ext2,+cl_khr_3d_image_writes ");
}

// compute-runtime shared/test/unit_test/helpers/compiler_options_parser_tests.cpp:81-94 and
// opencl/test/unit_test/program/program_tests.cpp:1126-1141 (fp64 emulation)
TEST(NeoVectors, Fp64EmulationAppendsItsPair)
{
  const auto list = compiler_extensions({"ext1"}, {}, "-cl-std=CL2.0", "-cl-fp64-gen-emu");
  EXPECT_EQ(list, " -cl-ext=-all,+ext1,+cl_khr_3d_image_writes,+__opencl_c_fp64,+cl_khr_fp64 ");
}

// compute-runtime shared/test/unit_test/helpers/compiler_options_parser_tests.cpp:96-108
// (removed below 1.2, kept at 1.2) and 116-122 (nothing to remove: no change)
TEST(NeoVectors, MsaaSharingLeavesAnEmptySlotBelow12)
{
  const std::vector<std::string> device{"ext1", "cl_khr_gl_msaa_sharing", "ext2"};
  EXPECT_EQ(compiler_extensions(device, {}, "-cl-std=CL1.1", ""), " -cl-ext=-all,+ext1,,+ext2 ");
  EXPECT_EQ(compiler_extensions(device, {}, "-cl-std=CL1.0", ""), " -cl-ext=-all,+ext1,,+ext2 ");
  EXPECT_EQ(compiler_extensions(device, {}, "-cl-std=CL1.2", ""), " -cl-ext=-all,+ext1,+cl_khr_gl_msaa_sharing,+ext2 ");
  EXPECT_EQ(compiler_extensions({"ext1", "ext2"}, {}, "-cl-std=CL1.1", ""), " -cl-ext=-all,+ext1,+ext2 ");
}

// The B580 virtual device's CL_DEVICE_EXTENSIONS, as NEO listed them in the
// internal options of a program without -cl-std (then the list is the
// device's, oclc_extensions.cpp:142-162): tests/data/neo_key/bmg-opencl/1d8e81a31e9d4b19.trace.
const std::string k_prefix =
  "-ocl-version=300 -cl-intel-greater-than-4GB-buffer-required -cl-intel-has-buffer-offset-arg "
  "-D__IMAGE_SUPPORT__=1 -fpreserve-vec3-type -cl-store-cache-default=2 "
  "-cl-load-cache-default=4 ";
const std::string k_head = " -cl-ext=-all,+cl_khr_byte_addressable_store,+cl_khr_fp16";
const std::string k_gl = ",+cl_khr_gl_sharing,+cl_khr_gl_depth_images,+cl_khr_gl_event";
const std::string k_device = "cl_khr_byte_addressable_store cl_khr_fp16 cl_khr_gl_sharing cl_khr_gl_depth_images "
                             "cl_khr_gl_event cl_khr_gl_msaa_sharing cl_intel_sharing_format_query";

TEST(NeoVectors, TheTracedListIsTheDevicesList)
{
  const auto place =
    find_extension_list(k_prefix + k_head + k_gl + ",+cl_khr_gl_msaa_sharing,+cl_intel_sharing_format_query ");
  ASSERT_TRUE(place);
  EXPECT_EQ(place->before, k_prefix);
  EXPECT_EQ(place->after, "");
  EXPECT_EQ(compiler_extensions(split_names(k_device), {}, "", place->before), place->list);
}

// A real card's internal options as public code that drives IGC directly
// quotes them (an older NEO on a Gen GPU, with libva): the device's list ends
// "...,+cl_intel_media_block_io,+cl_intel_va_api_media_sharing,+cl_intel_sharing_format_query,+cl_khr_pci_bus_info":
// VA before the format query (sharing_factory.cpp:28-45), the PCI extension last.
TEST(NeoVectors, ARealCardsListEndsWithThePciExtension)
{
  auto profile = manifest::embedded_intel_profile("arc-b580");
  ASSERT_TRUE(profile && *profile);
  (*profile)->opencl_extensions_added.front().after = "cl_intel_media_block_io"; // that GPU has no GL sharing listed
  auto key = card_key(**profile, "cl_khr_depth_images cl_khr_3d_image_writes cl_intel_media_block_io "
                                 "cl_intel_sharing_format_query");
  ASSERT_TRUE(key) << key.error().message();
  ASSERT_EQ(key->extension_lists.size(), 2u);
  const auto list = compiler_extensions(key->extension_lists[1], {}, "", "");
  EXPECT_TRUE(list.ends_with(",+cl_intel_media_block_io,+cl_intel_va_api_media_sharing,+cl_intel_sharing_format_query,"
                             "+cl_khr_pci_bus_info "))
    << list;
}

struct VersionCase
{
  const char* name;
  const char* options;
  std::string recorded_tail; // after k_head + k_gl, as NEO records it on the virtual device
  std::string card_tail;     // the card's, without libva
  std::string libva_tail;    // the card's, with libva
};

const std::string k_features = ",+__opencl_c_images,+__opencl_c_3d_image_writes";

std::vector<VersionCase>
version_cases()
{
  const std::string msaa = ",+cl_khr_gl_msaa_sharing";
  const std::string query = ",+cl_intel_sharing_format_query";
  const std::string va = ",+cl_intel_va_api_media_sharing";
  const std::string pci = ",+cl_khr_pci_bus_info";
  const std::string writes = ",+cl_khr_3d_image_writes";
  const auto plain = [&](const char* name, const char* options) {
    return VersionCase{name, options, msaa + query + " ", msaa + query + pci + " ", msaa + va + query + pci + " "};
  };
  return {
    plain("none", ""),
    // below 1.2: msaa's slot stays empty (",,"), VA after it
    {"CL1.0", "-cl-std=CL1.0", "," + query + " ", "," + query + pci + " ", "," + va + query + pci + " "},
    {"CL1.1", "-cl-std=CL1.1", "," + query + " ", "," + query + pci + " ", "," + va + query + pci + " "},
    plain("CL1.2", "-cl-std=CL1.2"),
    // 2.0: 3d_image_writes after the device's whole list, PCI included
    {"CL2.0", "-cl-std=CL2.0", msaa + query + writes + " ", msaa + query + pci + writes + " ",
     msaa + va + query + pci + writes + " "},
    // 3.0: the device's features after its whole list, PCI included
    {"CL3.0", "-cl-std=CL3.0", msaa + query + k_features + " ", msaa + query + pci + k_features + " ",
     msaa + va + query + pci + k_features + " "},
    plain("CLC++", "-cl-std=CLC++"),
    plain("CLC++2021", "-cl-std=CLC++2021"),
  };
}

class CardOptionsPerVersion : public ::testing::TestWithParam<std::string>
{};

TEST_P(CardOptionsPerVersion, ConstructedAsNeoDoes)
{
  auto profile = manifest::embedded_intel_profile(GetParam());
  ASSERT_TRUE(profile && *profile);
  auto key = card_key(**profile, k_device);
  ASSERT_TRUE(key) << key.error().message();
  for (const auto& c : version_cases()) {
    SCOPED_TRACE(c.name);
    const auto recorded = k_prefix + k_head + k_gl + c.recorded_tail;
    auto options = card_internal_options(recorded, c.options, CacheApi::opencl, *key);
    ASSERT_TRUE(options) << options.error().message();
    ASSERT_EQ(options->size(), 2u);
    EXPECT_EQ((*options)[0], k_prefix + k_head + k_gl + c.card_tail);
    EXPECT_EQ((*options)[1], k_prefix + k_head + k_gl + c.libva_tail);
  }
}

std::string
target_case_name(const ::testing::TestParamInfo<std::string>& param)
{
  std::string name = param.param;
  std::erase(name, '-');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Targets, CardOptionsPerVersion, ::testing::Values("arc-b580", "arc-a770", "mtl-u-igpu"),
                         target_case_name);

TEST(CardOptions, WhatTheRuleCannotGiveBackIsRefusedNotGuessed)
{
  auto profile = manifest::embedded_intel_profile("arc-b580");
  ASSERT_TRUE(profile && *profile);
  auto key = card_key(**profile, k_device);
  ASSERT_TRUE(key);
  // a list NEO would not have made from this device (an extension missing)
  auto options =
    card_internal_options(k_prefix + k_head + ",+cl_intel_sharing_format_query ", "", CacheApi::opencl, *key);
  ASSERT_FALSE(options);
  EXPECT_NE(options.error().message().find("does not give the recorded list"), std::string::npos);
  // no list at all
  EXPECT_FALSE(card_internal_options("-ocl-version=300", "", CacheApi::opencl, *key));
  // no device list known
  auto unknown = card_key(**profile, "");
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(
    card_internal_options(k_prefix + k_head + k_gl + ",+cl_khr_gl_msaa_sharing ", "", CacheApi::opencl, *unknown));
}

TEST(CardOptions, AMeasuredListIsTheCardsOwn)
{
  auto profile = manifest::embedded_intel_profile("arc-b580");
  ASSERT_TRUE(profile && *profile);
  // measured on a card host with libva: the list as that card reports it
  (*profile)->opencl_extensions_measured = manifest::ProfileValue{
    "cl_khr_byte_addressable_store cl_khr_fp16 cl_khr_gl_sharing cl_khr_gl_depth_images cl_khr_gl_event "
    "cl_khr_gl_msaa_sharing cl_intel_va_api_media_sharing cl_intel_sharing_format_query cl_khr_pci_bus_info",
    "measured on a card"};
  auto key = card_key(**profile, k_device);
  ASSERT_TRUE(key) << key.error().message();
  ASSERT_EQ(key->extension_lists.size(), 2u);
  EXPECT_EQ(compiler_extensions(key->extension_lists[0], {}, "", ""),
            k_head + k_gl + ",+cl_khr_gl_msaa_sharing,+cl_intel_sharing_format_query,+cl_khr_pci_bus_info ");
  EXPECT_EQ(compiler_extensions(key->extension_lists[1], {}, "", ""),
            k_head + k_gl +
              ",+cl_khr_gl_msaa_sharing,+cl_intel_va_api_media_sharing,+cl_intel_sharing_format_query,"
              "+cl_khr_pci_bus_info ");
}

} // namespace
