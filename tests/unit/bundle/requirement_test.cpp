// SPDX-License-Identifier: Apache-2.0
#include "bundle/requirement.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace prewarm::bundle {
namespace {

DeviceProperties
h100()
{
  return {{"vendor", "nvidia"}, {"opencl.device", "NVIDIA H100 80GB HBM3"}, {"nvidia.driver", "580.65.06"},
          {"nvidia.sm", "90"}, {"pci-id", "0x2330"}};
}

DeviceProperties
pocl_cpu()
{
  return {{"vendor", "cpu"}, {"opencl.device", "pthread-Intel(R) Xeon(R)"}, {"opencl.driver", "3.1"}};
}

bool
holds(const Requirement& r, const DeviceProperties& d)
{
  const auto check = check_requirement(r, d);
  EXPECT_TRUE(check) << (check ? "" : check.error().message());
  return check && check->satisfied;
}

TEST(Requirement, Equal)
{
  EXPECT_TRUE(holds({"vendor", "==", "nvidia"}, h100()));
  EXPECT_FALSE(holds({"vendor", "==", "NVIDIA"}, h100()));
}

TEST(Requirement, VersionCompare)
{
  EXPECT_TRUE(holds({"nvidia.driver", ">=", "580.65.6"}, h100()));
  EXPECT_TRUE(holds({"nvidia.driver", ">=", "550"}, h100()));
  EXPECT_FALSE(holds({"nvidia.driver", ">=", "580.65.07"}, h100()));
  EXPECT_TRUE(holds({"nvidia.driver", "<", "580.100"}, h100()));  // numeric, not lexicographic
  EXPECT_FALSE(holds({"nvidia.driver", "<", "580.65.06"}, h100()));
  EXPECT_TRUE(holds({"nvidia.sm", ">=", "80"}, h100()));
  EXPECT_EQ(*compare_versions("12", "12.0.0"), 0);
  EXPECT_EQ(*compare_versions("1.10", "1.9"), 1);
  EXPECT_EQ(*compare_versions("99999999999999999999999", "1"), 1);
  EXPECT_FALSE(compare_versions("1.x", "1"));
  EXPECT_FALSE(compare_versions("1..2", "1"));
}

TEST(Requirement, VersionOpOnNonVersionDeviceValueFails)
{
  DeviceProperties d{{"opencl.driver", "31.0.101.4575 (beta)"}};
  const auto check = check_requirement({"opencl.driver", ">=", "3.0"}, d);
  ASSERT_TRUE(check);
  EXPECT_FALSE(check->satisfied);
  EXPECT_NE(check->actual.find("not a version"), std::string::npos);
}

TEST(Requirement, InList)
{
  EXPECT_TRUE(holds({"pci-id", "in", "0x2330,0x2331,0x2322"}, h100()));
  EXPECT_FALSE(holds({"pci-id", "in", "0x2331,0x2322"}, h100()));
  EXPECT_FALSE(holds({"pci-id", "in", "0x23"}, h100())); // whole items, not substrings
}

TEST(Requirement, AbsentPropertyIsUnknown)
{
  const auto check = check_requirement({"intel.ip-version", "==", "12.55.8"}, h100());
  ASSERT_TRUE(check);
  EXPECT_FALSE(check->satisfied);
  EXPECT_EQ(check->actual, "unknown");
}

TEST(Requirement, UnknownKeyIsRejected)
{
  const auto s = validate_requirement({"gpu.cores", ">=", "100"});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), "E_UNKNOWN_REQUIREMENT");
  EXPECT_EQ(s.error().category(), Errc::verify);
  EXPECT_TRUE(validate_requirement({"framework.torch", ">=", "2.5"}));
  EXPECT_FALSE(validate_requirement({"framework.", "==", "x"}));
  EXPECT_FALSE(validate_requirement({"nvidia.driver", ">=", "latest"}));
  EXPECT_FALSE(validate_requirement({"vendor", "!=", "cpu"}));
}

TEST(MatchSlice, OneDeviceMustSatisfyAll)
{
  Slice slice;
  slice.requirements = {{"nvidia.sm", "==", "90"}, {"vendor", "==", "nvidia"}};
  const std::vector<DeviceProperties> host{pocl_cpu(), h100()};
  const auto match = match_slice(slice, host);
  EXPECT_TRUE(match.matched);
  EXPECT_EQ(match.device_index, 1u);
  EXPECT_NE(match.device_description_index_or_name.find("H100"), std::string::npos);

  // Split across devices: vendor from one, sm from another, is no match.
  DeviceProperties a{{"vendor", "nvidia"}, {"nvidia.sm", "80"}};
  DeviceProperties b{{"vendor", "intel"}, {"nvidia.sm", "90"}};
  const std::vector<DeviceProperties> split{a, b};
  EXPECT_FALSE(match_slice(slice, split).matched);
}

TEST(MatchSlice, ReasonNamesBestDeviceFirstFailure)
{
  Slice slice;
  slice.requirements = {{"nvidia.driver", ">=", "590"}, {"nvidia.sm", "==", "90"}, {"vendor", "==", "nvidia"}};
  const std::vector<DeviceProperties> host{pocl_cpu(), h100()};
  const auto match = match_slice(slice, host);
  EXPECT_FALSE(match.matched);
  EXPECT_EQ(match.device_index, 1u);
  EXPECT_NE(match.reason.find("nvidia.driver >= 590"), std::string::npos) << match.reason;
  EXPECT_NE(match.reason.find("580.65.06"), std::string::npos) << match.reason;
}

TEST(MatchSlice, UnknownValueInReason)
{
  Slice slice;
  slice.requirements = {{"intel.driver", ">=", "22.43"}};
  const std::vector<DeviceProperties> host{h100()};
  const auto match = match_slice(slice, host);
  EXPECT_FALSE(match.matched);
  EXPECT_NE(match.reason.find("unknown"), std::string::npos) << match.reason;
}

// A B580 as a host's probe reports it (values from the virtual B580 of
// NEO 26.27, except where a test changes one).
DeviceProperties
b580()
{
  return {{"vendor", "intel"}, {"opencl.device", "Intel(R) Arc(TM) B580 Graphics"}, {"pci-id", "0xe20b"},
          {"pci-revision", "0x00"}, {"intel.ip-version", "20.1.0"}, {"intel.igc", "100312632:1788812530"},
          {"intel.opencl-extensions", "2:2cd1bc9b1f3d6e58"}};
}

Slice
neo_slice(std::vector<Requirement> requirements, std::string_view entry = "neo/ab/cd/abcd.cl_cache")
{
  Slice slice;
  slice.id = "arc-b580-neo";
  slice.requirements = std::move(requirements);
  slice.files = {{std::string(entry), std::string(64, 'a'), 1, 0644}};
  return slice;
}

TEST(OpenclExtensionsValue, CountAndDigestOfTheWordsInOrder)
{
  // Digests from Python's hashlib.sha256 of the words joined by one space.
  EXPECT_EQ(opencl_extensions_value("cl_khr_fp16 cl_khr_fp64"), "2:2cd1bc9b1f3d6e58");
  EXPECT_EQ(opencl_extensions_value("  cl_khr_fp16   cl_khr_fp64 "), "2:2cd1bc9b1f3d6e58"); // as drivers pad it
  EXPECT_EQ(opencl_extensions_value("cl_khr_fp16 cl_khr_pci_bus_info cl_khr_fp64"), "3:5b9e87e33424db46");
  // NEO's -cl-ext list keeps the device's order, and so does the value.
  EXPECT_NE(opencl_extensions_value("cl_khr_fp64 cl_khr_fp16"), opencl_extensions_value("cl_khr_fp16 cl_khr_fp64"));
}

TEST(MatchSlice, AKeyInputThatDiffersIsNamedWithBothValuesAndWhatItCosts)
{
  const auto slice = neo_slice({{"intel.ip-version", "==", "20.1.0"}, {"pci-id", "==", "0xe20b"}});
  auto host = b580();
  host["intel.ip-version"] = "20.1.4";
  const std::vector<DeviceProperties> devices{host};
  const auto match = match_slice(slice, devices);
  EXPECT_FALSE(match.matched);
  EXPECT_EQ(match.reason, "intel.ip-version: host 20.1.4, slice 20.1.0 (NEO would miss every entry) on device 0 "
                          "(Intel(R) Arc(TM) B580 Graphics)");
  host["intel.ip-version"] = "20.1.0";
  EXPECT_TRUE(match_slice(slice, std::vector<DeviceProperties>{host}).matched);
}

TEST(MatchSlice, ARealCardsExtraExtensionRefusesTheOpenclEntries)
{
  const auto slice = neo_slice({{"intel.opencl-extensions", "==", "2:2cd1bc9b1f3d6e58"}});
  auto host = b580();
  host["intel.opencl-extensions"] = opencl_extensions_value("cl_khr_fp16 cl_khr_pci_bus_info cl_khr_fp64");
  const auto match = match_slice(slice, std::vector<DeviceProperties>{host});
  EXPECT_FALSE(match.matched);
  EXPECT_EQ(match.reason.rfind("intel.opencl-extensions: host 3:5b9e87e33424db46, slice 2:2cd1bc9b1f3d6e58 (NEO's "
                               "OpenCL key hashes the extension list: every .cl_cache entry would miss)",
                               0),
            0u)
    << match.reason;
  host.erase("intel.opencl-extensions"); // a host with Level Zero only
  EXPECT_NE(match_slice(slice, std::vector<DeviceProperties>{host}).reason.find("host unknown, slice 2:"),
            std::string::npos);
}

TEST(MatchSlice, OtherKeysKeepTheRequirementForm)
{
  const auto slice = neo_slice({{"pci-id", "==", "0x56a0"}});
  const auto match = match_slice(slice, std::vector<DeviceProperties>{b580()});
  EXPECT_EQ(match.reason, "requirement \"pci-id == 0x56a0\": device 0 (Intel(R) Arc(TM) B580 Graphics) has 0xe20b");
}

TEST(UncheckedKeyInputs, NeoEntriesWithoutTheirKeyInputsSaySo)
{
  const auto bare = neo_slice({{"pci-id", "==", "0xe20b"}, {"vendor", "==", "intel"}});
  EXPECT_EQ(unchecked_key_inputs(bare),
            (std::vector<std::string>{"intel.igc", "intel.ip-version", "pci-revision", "intel.opencl-extensions"}));
  EXPECT_NE(describe_unchecked_key_inputs(bare).find("key inputs not known for its target: intel.igc, "
                                                     "intel.ip-version, pci-revision, intel.opencl-extensions"),
            std::string::npos);

  // Level Zero entries: the OpenCL extension list is not in their key.
  const auto level_zero = neo_slice({{"intel.igc", "==", "1:2"}, {"intel.ip-version", "==", "20.1.0"},
                                     {"pci-id", "==", "0xe20b"}, {"pci-revision", "==", "0x00"}},
                                    "neo/ab/cd/abcd.l0_cache");
  EXPECT_TRUE(unchecked_key_inputs(level_zero).empty());
  EXPECT_EQ(describe_unchecked_key_inputs(level_zero), "");

  auto sycl = neo_slice({{"pci-id", "==", "0xe20b"}}, "sycl/1/2/3/4/0.bin");
  EXPECT_EQ(unchecked_key_inputs(sycl), std::vector<std::string>{"opencl.device"});
  sycl.requirements.push_back({"opencl.device", "==", "Intel(R) Arc(TM) B580 Graphics"});
  EXPECT_TRUE(unchecked_key_inputs(sycl).empty());

  // A cache no driver keys by these inputs: nothing to say.
  EXPECT_TRUE(unchecked_key_inputs(neo_slice({}, "pocl/kcache/x/program.bc")).empty());
  // A kind whose name merely starts like one.
  EXPECT_TRUE(unchecked_key_inputs(neo_slice({}, "neon/x.cl_cache")).empty());
}

TEST(MatchSlice, NoRequirementsMatchesAnyHostNoDevicesNothingElse)
{
  Slice any;
  EXPECT_TRUE(match_slice(any, {}).matched);
  Slice picky;
  picky.requirements = {{"vendor", "==", "cpu"}};
  const auto none = match_slice(picky, {});
  EXPECT_FALSE(none.matched);
  EXPECT_NE(none.reason.find("no devices"), std::string::npos);
}

TEST(MatchSlice, HandBuiltUnknownKeyNeverMatches)
{
  Slice slice;
  slice.requirements = {{"gpu.cores", "==", "1"}};
  const std::vector<DeviceProperties> host{DeviceProperties{{"gpu.cores", "1"}}};
  const auto match = match_slice(slice, host);
  EXPECT_FALSE(match.matched);
  EXPECT_NE(match.reason.find("unknown key"), std::string::npos) << match.reason;
}

} // namespace
} // namespace prewarm::bundle
