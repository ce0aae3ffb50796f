// SPDX-License-Identifier: Apache-2.0
// intel.igc: the IGC identity NEO's cache keys hash, read with one stat().
#include "base/files.hpp"
#include "bundle/requirement.hpp"
#include "host/intel_compiler_identity.hpp"
#include "host/probe_host.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/stat.h>
#include <utime.h>

using namespace prewarm;
using namespace prewarm::host;
namespace fs = std::filesystem;

namespace {

void
make_library(const fs::path& file, std::string_view bytes, long mtime)
{
  fs::create_directories(file.parent_path());
  ASSERT_TRUE(write_file_atomic(file, bytes, 0644, Durability::none));
  const struct utimbuf times{mtime, mtime};
  ASSERT_EQ(::utime(file.c_str(), &times), 0);
}

} // namespace

TEST(IgcIdentity, SizeAndMtimeOfTheFileALinkNames)
{
  auto dir = TempDir::create("prewarm-igc-test-");
  ASSERT_TRUE(dir);
  make_library(dir->path() / "libigc.so.2.40.14+0", "0123456789", 1788812530);
  fs::create_symlink("libigc.so.2.40.14+0", dir->path() / "libigc.so.2");
  // NEO stats the library it loaded through the soname link: the target's size and mtime.
  EXPECT_EQ(igc_identity_of(dir->path() / "libigc.so.2"), "10:1788812530");
  EXPECT_EQ(igc_identity_of(dir->path() / "absent"), std::nullopt);
}

TEST(IgcIdentity, LibraryPathFirstThenTheDistributionsDirectories)
{
  auto dir = TempDir::create("prewarm-igc-test-");
  ASSERT_TRUE(dir);
  const auto root = dir->path() / "root";
  EXPECT_EQ(find_igc_library("", root), std::nullopt);
  make_library(root / "usr/lib/x86_64-linux-gnu/libigc.so.2", "a", 1);
  EXPECT_EQ(find_igc_library("", root), root / "usr/lib/x86_64-linux-gnu/libigc.so.2");
  make_library(dir->path() / "opt/libigc.so.2", "b", 2);
  EXPECT_EQ(find_igc_library("/nonexistent::" + (dir->path() / "opt").string(), root),
            dir->path() / "opt/libigc.so.2");
}

TEST(IgcIdentity, GoesIntoIntelGpuRecordsOnly)
{
  HostFindings f;
  f.opencl_devices.push_back({"OpenCL 0: Arc", {{"vendor", "intel"}, {"pci-id", "0x56a5"}}});
  f.opencl_devices.push_back({"OpenCL 1: cpu", {{"vendor", "cpu"}}});
  f.igc_identity = "100312632:1788812530";
  const auto devices = merge_host_findings(f);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].properties.at("intel.igc"), "100312632:1788812530");
  EXPECT_FALSE(devices[1].properties.contains("intel.igc"));
}

TEST(IgcIdentity, ASliceForAnotherIgcIsRefusedSayingWhy)
{
  bundle::Slice slice;
  slice.id = "arc-b580-neo";
  slice.requirements = {{"vendor", "==", "intel"}, {"intel.igc", "==", "100312632:1788812530"}};
  const std::vector<DeviceProperties> same = {{{"vendor", "intel"}, {"intel.igc", "100312632:1788812530"}}};
  EXPECT_TRUE(bundle::match_slice(slice, same).matched);
  const std::vector<DeviceProperties> other = {{{"vendor", "intel"}, {"intel.igc", "100312632:1788800000"}}};
  const auto match = bundle::match_slice(slice, other);
  EXPECT_FALSE(match.matched);
  EXPECT_NE(match.reason.find("intel.igc: host 100312632:1788800000, slice 100312632:1788812530 (the IGC library "
                              "differs"),
            std::string::npos)
    << match.reason;
  const std::vector<DeviceProperties> unknown = {{{"vendor", "intel"}}};
  EXPECT_FALSE(bundle::match_slice(slice, unknown).matched);
}
