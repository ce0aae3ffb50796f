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
