// SPDX-License-Identifier: Apache-2.0
// The host fingerprint: stable while nothing changes, different when any
// source the probe reads changes (sysfs, the NVIDIA driver, an ICD file).
#include "base/files.hpp"
#include "host/host_fingerprint.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

using namespace prewarm;
using namespace prewarm::host;
namespace fs = std::filesystem;

namespace {

void
write(const fs::path& path, std::string_view text)
{
  fs::create_directories(path.parent_path());
  ASSERT_TRUE(write_file_atomic(path, text, 0644, Durability::none));
}

class HostFingerprint : public ::testing::Test
{
protected:
  TempDir dir = std::move(*TempDir::create("prewarm-fingerprint-test-"));
  HostProbeOptions options;
  fs::path vendors = dir.path() / "vendors";

  void SetUp() override
  {
    options.proc_root = dir.path() / "proc";
    options.sys_root = dir.path() / "sys";
    options.python = "";
    options.frameworks.wanted = false;
    write(options.proc_root / "cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\n"
                                         "cpu MHz\t\t: 2000.1\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n");
    write(vendors / "pocl.icd", "libpocl.so.2\n");
    ::setenv("OCL_ICD_VENDORS", vendors.c_str(), 1);
  }
  void TearDown() override { ::unsetenv("OCL_ICD_VENDORS"); }

  std::string fingerprint() { return host_fingerprint(options); }
};

} // namespace

TEST_F(HostFingerprint, StableWhileNothingChanges)
{
  const auto first = fingerprint();
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(fingerprint(), first);
  // What varies from read to read (the CPU's clock) is not part of it.
  write(options.proc_root / "cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\n"
                                       "cpu MHz\t\t: 3100.7\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n");
  EXPECT_EQ(fingerprint(), first);
}

TEST_F(HostFingerprint, ChangesWithEverySource)
{
  auto last = fingerprint();
  const auto expect_changed = [&](const char* what) {
    const auto now = fingerprint();
    EXPECT_NE(now, last) << what << "\n" << host_fingerprint_text(options);
    last = now;
  };
  write(options.proc_root / "cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: Other CPU\n");
  expect_changed("another CPU");
  const auto gpu = options.sys_root / "bus/pci/devices/0000:03:00.0";
  write(gpu / "class", "0x030000\n");
  write(gpu / "vendor", "0x8086\n");
  write(gpu / "device", "0x56a0\n");
  write(gpu / "revision", "0x08\n");
  expect_changed("a GPU on the PCI bus");
  write(options.proc_root / "driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.1.2\n");
  expect_changed("an NVIDIA kernel driver");
  write(vendors / "other.icd", "/nonexistent/libother.so\n");
  expect_changed("another ICD file");
  write(vendors / "other.icd", "/nonexistent/libthird.so\n");
  expect_changed("an ICD file naming another library");
  const auto library = dir.path() / "libfake.so";
  write(library, "v1");
  write(vendors / "other.icd", library.string() + "\n");
  expect_changed("an ICD file naming an existing library");
  write(library, "version 2");
  expect_changed("that library replaced (a driver update)");
  ::setenv("PREWARM_HOST_DEVICES", (dir.path() / "host.json").c_str(), 1);
  write(dir.path() / "host.json", R"([{"vendor": "cpu"}])");
  expect_changed("a test host description");
  write(dir.path() / "host.json", R"([{"vendor": "nvidia"}])");
  expect_changed("another test host description");
  ::unsetenv("PREWARM_HOST_DEVICES");
}
