// SPDX-License-Identifier: Apache-2.0
// Enumeration through the REAL Level Zero loader (libze_loader 1.8.12) and the
// test double driver (tests/support/ze_test_driver; not a GPU).
#include "level_zero/device.hpp"

#include "ze_test_env.hpp"

#include <gtest/gtest.h>

namespace prewarm::level_zero {
namespace {

class ZeDeviceTest : public ::testing::Test
{
protected:
  static void SetUpTestSuite() { testing::use_test_driver(); }
  void SetUp() override
  {
    ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a5", 1);
    ASSERT_TRUE(initialize()) << "zeInit through the loader with the test double failed";
  }
};

TEST(ZeDriverVersion, NeoEncoding)
{
  EXPECT_EQ(decode_driver_version((22u << 24) | (43u << 16) | 24595u), "22.43.24595");
  EXPECT_EQ(decode_driver_version(0), "0.0.0");
  EXPECT_EQ(pci_id_text(0x56A5), "0x56a5");
  EXPECT_EQ(pci_id_text(0xbd5), "0x0bd5");
}

TEST_F(ZeDeviceTest, EnumeratesTheDoubleAsIntel)
{
  testing::CallLog log;
  auto devices = enumerate_devices();
  ASSERT_TRUE(devices) << devices.error().message();
  ASSERT_EQ(devices->size(), 1u);
  const auto& p = devices->at(0).properties;
  EXPECT_EQ(p.at("vendor"), "intel");
  EXPECT_EQ(p.at("pci-id"), "0x56a5");
  EXPECT_EQ(p.at("level-zero.device"), "prewarm test double (not a GPU)");
  EXPECT_EQ(p.at("intel.driver"), "22.43.24595");
  EXPECT_FALSE(p.contains("pci-revision")); // the double has no PCI address
  EXPECT_NE(devices->at(0).description.find("0x56a5"), std::string::npos);
}

TEST_F(ZeDeviceTest, DeviceIdAndDriverVersionComeFromTheDriver)
{
  ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56A0", 1);
  ::setenv("PREWARM_ZE_TEST_DRIVER_VERSION", "23.5.25593", 1);
  auto devices = enumerate_devices();
  ::unsetenv("PREWARM_ZE_TEST_DRIVER_VERSION");
  ASSERT_TRUE(devices);
  EXPECT_EQ(devices->at(0).properties.at("pci-id"), "0x56a0");
  EXPECT_EQ(devices->at(0).properties.at("intel.driver"), "23.5.25593");
}

TEST_F(ZeDeviceTest, SelectionIsExplicit)
{
  auto none = select_device("");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().category(), Errc::usage);
  EXPECT_NE(none.error().message().find("prewarm test double"), std::string::npos) << none.error().message();

  auto by_index = select_device("0");
  ASSERT_TRUE(by_index);
  auto by_name = select_device("TEST DOUBLE");
  ASSERT_TRUE(by_name);
  auto by_pci = select_device("0x56a5");
  ASSERT_TRUE(by_pci);
  EXPECT_EQ(by_pci->device, by_index->device);

  auto missing = select_device("3");
  ASSERT_FALSE(missing);
  auto wrong = select_device("arc b580");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message().find("arc b580"), std::string::npos);
}

TEST_F(ZeDeviceTest, NoDeviceIsAnEmptyList)
{
  ::setenv("PREWARM_ZE_TEST_DEVICE_COUNT", "0", 1);
  auto devices = enumerate_devices();
  ::unsetenv("PREWARM_ZE_TEST_DEVICE_COUNT");
  ASSERT_TRUE(devices);
  EXPECT_TRUE(devices->empty());
}

} // namespace
} // namespace prewarm::level_zero
