// SPDX-License-Identifier: Apache-2.0
#include "jobs/slice_identity.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace prewarm::jobs {
namespace {

manifest::Target
target(manifest::Vendor vendor, std::string name)
{
  manifest::Target t;
  t.name = std::move(name);
  t.vendor = vendor;
  return t;
}

const DeviceProperties k_pocl{{"vendor", "cpu"},
                              {"opencl.platform", "Portable Computing Language"},
                              {"opencl.platform-version", "OpenCL 3.0 PoCL 3.1+debian"},
                              {"opencl.device", "pthread-skylake-avx512"},
                              {"opencl.device-version", "OpenCL 3.0 PoCL"},
                              {"opencl.driver", "3.1+debian"}};

TEST(SliceIdentity, PoclRequirementsPinPlatformDeviceAndDriver)
{
  const auto r = run_requirements(target(manifest::Vendor::cpu, "cpu"), k_pocl);
  EXPECT_EQ(canonical_requirements(r), "opencl.device == pthread-skylake-avx512\n"
                                       "opencl.device-version == OpenCL 3.0 PoCL\n"
                                       "opencl.driver == 3.1+debian\n"
                                       "opencl.platform-version == OpenCL 3.0 PoCL 3.1+debian\n"
                                       "vendor == cpu\n");
}

TEST(SliceIdentity, ValuesTheBundleCannotHoldAreLeftOut)
{
  EXPECT_TRUE(representable_value("OpenCL 3.0 PoCL 3.1+debian Linux"));
  EXPECT_FALSE(representable_value("OpenCL 3.0 PoCL 3.1+debian  Linux")); // PoCL 3.1 really says this
  EXPECT_FALSE(representable_value(" x"));
  EXPECT_FALSE(representable_value("x "));
  EXPECT_FALSE(representable_value(""));
  EXPECT_FALSE(representable_value("tab\there"));
  auto device = k_pocl;
  device["opencl.platform-version"] = "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts";
  const auto r = run_requirements(target(manifest::Vendor::cpu, "cpu"), device);
  EXPECT_EQ(r.size(), 4u);
  for (const auto& q : r) {
    EXPECT_NE(q.key, "opencl.platform-version");
  }
}

TEST(SliceIdentity, NvidiaRequirementsPinDriverAndSm)
{
  const DeviceProperties h100{{"vendor", "nvidia"},          {"nvidia.driver", "580.159.04"},
                              {"nvidia.sm", "90"},           {"opencl.device", "NVIDIA H100 80GB HBM3"},
                              {"opencl.driver", "580.159.04"}, {"pci-id", "0x2330"}};
  const auto r = run_requirements(target(manifest::Vendor::nvidia, "h100"), h100);
  EXPECT_EQ(canonical_requirements(r), "nvidia.driver == 580.159.04\n"
                                       "nvidia.sm == 90\n"
                                       "opencl.device == NVIDIA H100 80GB HBM3\n"
                                       "opencl.driver == 580.159.04\n"
                                       "vendor == nvidia\n");
}

TEST(SliceIdentity, UnreportedPropertiesAreLeftOut)
{
  // An absent key would be "unknown" on every host and match none.
  const DeviceProperties partial{{"vendor", "nvidia"}, {"nvidia.sm", "90"}};
  EXPECT_EQ(canonical_requirements(run_requirements(target(manifest::Vendor::nvidia, "h100"), partial)),
            "nvidia.sm == 90\nvendor == nvidia\n");
}

TEST(SliceIdentity, IdIsTargetPlusDigestAndChangesWithEveryRequirement)
{
  const auto t = target(manifest::Vendor::cpu, "cpu");
  const auto base = run_requirements(t, k_pocl);
  const auto id = slice_id("cpu", base);
  EXPECT_TRUE(std::regex_match(id, std::regex("cpu-[0-9a-f]{12}"))) << id;
  // Order of the requirements does not matter...
  auto reversed = base;
  std::reverse(reversed.begin(), reversed.end());
  EXPECT_EQ(slice_id("cpu", reversed), id);
  // ...every value does.
  for (const auto* key : {"opencl.device", "opencl.device-version", "opencl.driver", "opencl.platform-version", "vendor"}) {
    auto changed = k_pocl;
    changed[key] += "x";
    EXPECT_NE(slice_id("cpu", run_requirements(t, changed)), id) << key;
  }
  EXPECT_NE(slice_id("cpu2", base), id);
}

} // namespace
} // namespace prewarm::jobs
