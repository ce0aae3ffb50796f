// SPDX-License-Identifier: Apache-2.0
// On the real OpenCL devices of this host (PoCL's CPU device at least).
#include "base/device_properties.hpp"
#include "opencl/check.hpp"
#include "opencl/device.hpp"
#include "opencl/owned.hpp"
#include "opencl/program.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace prewarm::opencl {
namespace {

std::vector<DeviceRef>
devices_or_skip()
{
  auto devices = enumerate_devices();
  if (!devices) {
    return {};
  }
  return *devices;
}

#define REQUIRE_DEVICES(devices_)                                                        \
  const auto devices_ = devices_or_skip();                                               \
  if (devices_.empty()) {                                                                \
    GTEST_SKIP() << "no OpenCL device on this host (install pocl-opencl-icd)";           \
  }

TEST(OpenClStatus, NamesKnownAndUnknownCodes)
{
  EXPECT_EQ(status_name(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(status_name(CL_INVALID_KERNEL_NAME), "CL_INVALID_KERNEL_NAME");
  EXPECT_EQ(status_name(-12345), "CL_UNKNOWN_ERROR");
}

Status
failing_call()
{
  PW_CL_CHECK(clGetPlatformIDs(0, nullptr, nullptr)); // both null: CL_INVALID_VALUE
  return {};
}

TEST(OpenClCheck, ErrorNamesTheCallAndTheStatus)
{
  const auto status = failing_call();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), "E_OPENCL");
  EXPECT_NE(status.error().message().find("clGetPlatformIDs"), std::string::npos) << status.error().message();
  EXPECT_NE(status.error().message().find("CL_INVALID_VALUE"), std::string::npos) << status.error().message();
}

TEST(OpenClDevices, EveryDeviceHasIdentityProperties)
{
  REQUIRE_DEVICES(devices);
  for (const auto& d : devices) {
    SCOPED_TRACE(d.description);
    for (auto key : {prop::vendor, prop::opencl_platform, prop::opencl_platform_version, prop::opencl_device,
                     prop::opencl_device_version, prop::opencl_driver}) {
      ASSERT_TRUE(d.properties.contains(key)) << key;
      EXPECT_FALSE(d.properties.find(key)->second.empty()) << key;
      EXPECT_EQ(d.properties.find(key)->second.find('\0'), std::string::npos) << key;
    }
    EXPECT_NE(d.description.find(d.properties.find(prop::opencl_device)->second), std::string::npos);
  }
}

TEST(OpenClDevices, PoclCpuDeviceIsVendorCpu)
{
  REQUIRE_DEVICES(devices);
  bool saw_pocl = false;
  for (const auto& d : devices) {
    if (d.properties.find(prop::opencl_platform)->second == "Portable Computing Language") {
      saw_pocl = true;
      EXPECT_EQ(d.properties.find(prop::vendor)->second, "cpu");
      EXPECT_FALSE(d.is_gpu);
      EXPECT_FALSE(d.properties.contains(prop::nvidia_sm)); // only where the extension reports it
    }
  }
  if (!saw_pocl) {
    GTEST_SKIP() << "PoCL is not installed here";
  }
}

TEST(OpenClSelect, EmptySelectorPrefersAGpuElseTheFirstDevice)
{
  REQUIRE_DEVICES(devices);
  const auto chosen = select_device(devices, "");
  ASSERT_TRUE(chosen) << chosen.error().message();
  const auto gpu = std::ranges::find_if(devices, [](const DeviceRef& d) { return d.is_gpu; });
  EXPECT_EQ(chosen->index, gpu != devices.end() ? gpu->index : 0);

  // Same rule on a synthetic list: a GPU later in the list wins.
  std::vector<DeviceRef> fake(3);
  for (int i = 0; i < 3; ++i) {
    fake[i].index = i;
    fake[i].description = std::to_string(i);
  }
  fake[2].is_gpu = true;
  EXPECT_EQ(select_device(fake, "")->index, 2);
  fake[2].is_gpu = false;
  EXPECT_EQ(select_device(fake, "")->index, 0);
}

TEST(OpenClSelect, ByIndexAndByCaseInsensitiveName)
{
  REQUIRE_DEVICES(devices);
  const auto& last = devices.back();
  const auto by_index = select_device(devices, std::to_string(last.index));
  ASSERT_TRUE(by_index);
  EXPECT_EQ(by_index->device, last.device);

  std::string name = last.properties.find(prop::opencl_device)->second;
  std::string upper;
  for (char c : name.substr(0, std::min<std::size_t>(name.size(), 6))) {
    upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  const auto by_name = select_device(devices, upper);
  ASSERT_TRUE(by_name) << by_name.error().message();
  EXPECT_NE(by_name->properties.find(prop::opencl_device)->second.find(name.substr(0, upper.size())), std::string::npos);
}

TEST(OpenClSelect, NoMatchIsAnErrorListingTheDevices)
{
  REQUIRE_DEVICES(devices);
  const auto by_name = select_device(devices, "no-such-gpu-xyz");
  ASSERT_FALSE(by_name);
  EXPECT_EQ(by_name.error().code(), "E_NO_SUCH_DEVICE");
  EXPECT_EQ(by_name.error().category(), Errc::usage);
  for (const auto& d : devices) {
    EXPECT_NE(by_name.error().message().find(d.description), std::string::npos) << by_name.error().message();
  }
  const auto by_index = select_device(devices, std::to_string(devices.size()));
  ASSERT_FALSE(by_index);
  EXPECT_EQ(by_index.error().code(), "E_NO_SUCH_DEVICE");
  EXPECT_FALSE(select_device(devices, "-1"));
}

// A process with no ICD registered: the loader finds no platform. Runs in a
// fresh child process (the loader reads OCL_ICD_VENDORS once per process).
TEST(OpenClDevicesDeathTest, NoIcdNamesThePackageToInstall)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
    {
      ::setenv("OCL_ICD_VENDORS", "/nonexistent-prewarm-test-vendors", 1);
      const auto devices = enumerate_devices();
      if (devices) {
        std::_Exit(10);
      }
      fprintf(stderr, "%s\n", devices.error().message().c_str());
      std::_Exit(devices.error().code() == "E_NO_OPENCL" ? 0 : 11);
    },
    ::testing::ExitedWithCode(0),
    "install pocl-opencl-icd");
}

struct ContextFixture : ::testing::Test
{
  void SetUp() override
  {
    auto devices = enumerate_devices();
    if (!devices) {
      GTEST_SKIP() << "no OpenCL device";
    }
    device = devices->front();
    cl_int status = CL_SUCCESS;
    context = UniqueContext(clCreateContext(nullptr, 1, &device.device, nullptr, nullptr, &status));
    ASSERT_EQ(status, CL_SUCCESS);
  }
  DeviceRef device;
  UniqueContext context;
};

cl_uint
reference_count(cl_context context)
{
  cl_uint count = 0;
  clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof count, &count, nullptr);
  return count;
}

TEST_F(ContextFixture, OwnedSharesAndReleasesReferences)
{
  const auto before = reference_count(context.get());
  {
    auto second = UniqueContext::share(context.get());
    EXPECT_EQ(reference_count(context.get()), before + 1);
    UniqueContext moved = std::move(second);
    EXPECT_FALSE(second); // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    EXPECT_EQ(reference_count(context.get()), before + 1);
  }
  EXPECT_EQ(reference_count(context.get()), before);
}

TEST_F(ContextFixture, BuildFailureCarriesTheBuildLog)
{
  const auto program = build_from_source(context.get(), device.device,
                                         "__kernel void k(__global float* x) { x[0] = undeclared_name_q7; }", "");
  ASSERT_FALSE(program);
  EXPECT_EQ(program.error().code(), "E_OPENCL_BUILD");
  EXPECT_NE(program.error().message().find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos);
  EXPECT_NE(program.error().message().find("undeclared_name_q7"), std::string::npos) << program.error().message();
}

TEST_F(ContextFixture, BuiltProgramHasABinary)
{
  const auto program =
    build_from_source(context.get(), device.device, "__kernel void k(__global float* x) { x[0] = 1.0f; }", "-DX=1");
  ASSERT_TRUE(program) << program.error().message();
  const auto binary = program_binary(program->get());
  ASSERT_TRUE(binary) << binary.error().message();
  EXPECT_GT(binary->size(), 16u);
}

} // namespace
} // namespace prewarm::opencl
