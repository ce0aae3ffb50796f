// SPDX-License-Identifier: Apache-2.0
// Every input of the program store key changes the key.
#include "base/digest.hpp"
#include "store/program_store.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace prewarm::store {
namespace {

ProgramKey
base_key()
{
  ProgramKey key;
  key.source_sha256 = std::string(64, 'a');
  key.source_kind = SourceKind::source;
  key.options = "-DTILE=16";
  key.platform = "Portable Computing Language";
  key.platform_version = "OpenCL 3.0 PoCL 3.1+debian";
  key.device = "pthread-skylake-avx512";
  key.device_version = "OpenCL 3.0 PoCL HSTR: pthread-x86_64";
  key.driver = "3.1+debian";
  key.vendor = "cpu";
  return key;
}

void
expect_changes_key(const std::function<void(ProgramKey&)>& change)
{
  const auto base = base_key();
  auto changed = base_key();
  change(changed);
  EXPECT_NE(base.canonical_text(), changed.canonical_text());
  EXPECT_NE(base.digest(), changed.digest());
}

TEST(ProgramKey, DigestIsSha256OfCanonicalText)
{
  const auto key = base_key();
  EXPECT_EQ(key.digest().size(), 64u);
  EXPECT_EQ(key.digest(), base_key().digest()); // deterministic
  EXPECT_TRUE(key.canonical_text().starts_with("format 1\nsource-sha256 "));
}

TEST(ProgramKey, SourceChangesKey) { expect_changes_key([](ProgramKey& k) { k.source_sha256 = std::string(64, 'b'); }); }
TEST(ProgramKey, SourceKindChangesKey) { expect_changes_key([](ProgramKey& k) { k.source_kind = SourceKind::il; }); }
TEST(ProgramKey, OptionsChangeKey) { expect_changes_key([](ProgramKey& k) { k.options = "-DTILE=8"; }); }
TEST(ProgramKey, PlatformChangesKey) { expect_changes_key([](ProgramKey& k) { k.platform = "NVIDIA CUDA"; }); }
TEST(ProgramKey, PlatformVersionChangesKey)
{
  expect_changes_key([](ProgramKey& k) { k.platform_version = "OpenCL 3.0 PoCL 3.2"; });
}
TEST(ProgramKey, DeviceChangesKey) { expect_changes_key([](ProgramKey& k) { k.device = "pthread-haswell"; }); }
TEST(ProgramKey, DeviceVersionChangesKey)
{
  expect_changes_key([](ProgramKey& k) { k.device_version = "OpenCL 1.2 PoCL"; });
}
TEST(ProgramKey, DriverChangesKey) { expect_changes_key([](ProgramKey& k) { k.driver = "3.1+debian2"; }); }
TEST(ProgramKey, VendorChangesKey) { expect_changes_key([](ProgramKey& k) { k.vendor = "intel"; }); }

TEST(ProgramKey, ExtraFieldsChangeKeyInOrder)
{
  // The OpenCL layer's fields: spec constants, headers, ICD identity, stage.
  expect_changes_key([](ProgramKey& k) { k.extra = {{"spec-constants", "1=ab"}}; });
  expect_changes_key([](ProgramKey& k) { k.extra = {{"icd", "/usr/lib/libpocl.so.2 size=1 mtime=2"}}; });
  auto ab = base_key();
  ab.extra = {{"header", "a.h 1"}, {"header", "b.h 2"}};
  auto ba = base_key();
  ba.extra = {{"header", "b.h 2"}, {"header", "a.h 1"}};
  EXPECT_NE(ab.digest(), ba.digest());
}

TEST(ProgramKey, NoExtraFieldsKeepsTheEngineFormat)
{
  // Keys the engine wrote before extra fields existed must still match.
  EXPECT_TRUE(base_key().canonical_text().ends_with("vendor cpu\n"));
  auto key = base_key();
  key.extra = {{"stage", "build"}};
  EXPECT_TRUE(key.canonical_text().ends_with("vendor cpu\nstage build\n"));
}

TEST(ProgramKey, AnExtraFieldNameCannotForgeAValue)
{
  auto spaced = base_key();
  spaced.extra = {{"a b", "c"}};
  auto plain = base_key();
  plain.extra = {{"a", "b c"}};
  EXPECT_NE(spaced.digest(), plain.digest());
}

TEST(ProgramKey, ANewlineInAValueCannotForgeAnotherField)
{
  // Without escaping, these two keys would have the same canonical text.
  auto forged = base_key();
  forged.options = "-DA\nplatform X";
  forged.platform = "";
  auto honest = base_key();
  honest.options = "-DA";
  honest.platform = "X";
  EXPECT_NE(forged.canonical_text(), honest.canonical_text());
  EXPECT_NE(forged.canonical_text().find("options -DA\\nplatform X\n"), std::string::npos);
}

TEST(ProgramKey, ForDeviceTakesTheDeviceIdentity)
{
  opencl::DeviceRef device;
  device.properties = {{"vendor", "nvidia"},
                       {"opencl.platform", "NVIDIA CUDA"},
                       {"opencl.platform-version", "OpenCL 3.0 CUDA 12.4.131"},
                       {"opencl.device", "NVIDIA H100"},
                       {"opencl.device-version", "OpenCL 3.0 CUDA"},
                       {"opencl.driver", "550.54.15"}};
  const auto key = ProgramKey::for_device(device, "kernel source", "-DX");
  EXPECT_EQ(key.vendor, "nvidia");
  EXPECT_EQ(key.platform, "NVIDIA CUDA");
  EXPECT_EQ(key.platform_version, "OpenCL 3.0 CUDA 12.4.131");
  EXPECT_EQ(key.device, "NVIDIA H100");
  EXPECT_EQ(key.device_version, "OpenCL 3.0 CUDA");
  EXPECT_EQ(key.driver, "550.54.15");
  EXPECT_EQ(key.options, "-DX");
  EXPECT_EQ(key.source_sha256, sha256_hex("kernel source"));
  EXPECT_NE(key.digest(), ProgramKey::for_device(device, "kernel source ", "-DX").digest());
}

} // namespace
} // namespace prewarm::store
