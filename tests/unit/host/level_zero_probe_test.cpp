// SPDX-License-Identifier: Apache-2.0
// The host probe's Level Zero source through the REAL loader and the test
// double driver (not a GPU): an "Arc A380" with no OpenCL ICD still yields
// the pci-id and NEO driver version an AOT slice requires.
#include "host/level_zero_probe.hpp"
#include "host/probe_host.hpp"
#include "ze_test_env.hpp"

#include <gtest/gtest.h>

namespace prewarm::host {
namespace {

TEST(LevelZeroProbe, TestDoubleDeviceIsARecordWithPciIdAndDriver)
{
  if (!level_zero_probe_available()) {
    GTEST_SKIP() << "built without Level Zero";
  }
  level_zero::testing::use_test_driver(); // before the (forked) zeInit
  ::setenv("PREWARM_ZE_TEST_DRIVER_VERSION", "22.43.24595", 1);
  auto devices = probe_level_zero_devices(std::chrono::seconds(20));
  ASSERT_TRUE(devices) << devices.error().message();
  ASSERT_EQ(devices->size(), 1u);
  const auto& p = (*devices)[0].properties;
  EXPECT_EQ(p.at("vendor"), "intel");
  EXPECT_EQ(p.at("pci-id"), "0x56a5");
  EXPECT_EQ(p.at("intel.driver"), "22.43.24595");
  EXPECT_NE((*devices)[0].description.find("test double"), std::string::npos) << (*devices)[0].description;

  // Through probe_host, without OpenCL: the record a slice is matched against.
  HostProbeOptions options;
  options.opencl = OpenclProbe::disabled;
  options.proc_root = "/nonexistent-proc";
  options.sys_root = "/nonexistent-sys";
  options.python.clear();
  auto host = probe_host(options);
  ASSERT_TRUE(host) << host.error().message();
  ASSERT_EQ(host->size(), 2u) << describe_host(*host); // and the CPU record, last
  EXPECT_EQ((*host)[0].properties.at("intel.driver"), "22.43.24595");

  // No device: an empty list, not an error.
  ::setenv("PREWARM_ZE_TEST_DEVICE_COUNT", "0", 1);
  auto none = probe_level_zero_devices(std::chrono::seconds(20));
  ::unsetenv("PREWARM_ZE_TEST_DEVICE_COUNT");
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_TRUE(none->empty());
}

} // namespace
} // namespace prewarm::host
