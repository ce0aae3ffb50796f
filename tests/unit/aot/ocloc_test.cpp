// SPDX-License-Identifier: Apache-2.0
// The ocloc wrapper against the real ocloc installed here (no GPU needed).
#include "aot/ocloc.hpp"

#include "base/files.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace prewarm::aot {
namespace {

constexpr std::string_view k_source = R"(
#ifndef TILE
#define TILE 4
#endif
__kernel void test_only_scale(__global float* x, float a) { x[get_global_id(0)] *= a * TILE; }
__kernel void test_only_add(__global float* x, __global const float* y)
{ x[get_global_id(0)] += y[get_global_id(0)]; }
)";

OclocCompileRequest
request(std::string_view source, std::string options, std::string device, std::string name = "t.cl")
{
  OclocCompileRequest r;
  r.source_name = std::move(name);
  r.source = source;
  r.options = std::move(options);
  r.device = std::move(device);
  return r;
}

class OclocTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto ocloc = Ocloc::locate();
    if (!ocloc) {
      GTEST_SKIP() << "ocloc not usable here: " << ocloc.error().message();
    }
    m_ocloc.emplace(std::move(*ocloc));
  }
  const Ocloc& ocloc() const { return *m_ocloc; }
  std::optional<Ocloc> m_ocloc;
};

TEST_F(OclocTest, VersionIsDottedNumbers)
{
  const auto& v = ocloc().driver_version();
  ASSERT_FALSE(v.empty());
  EXPECT_NE(v.find('.'), std::string::npos) << v;
  EXPECT_EQ(v.find_first_not_of("0123456789."), std::string::npos) << v;
}

TEST_F(OclocTest, KnownDeviceHasIpVersion)
{
  auto device = ocloc().lookup_device("acm-g11");
  ASSERT_TRUE(device) << device.error().message();
  EXPECT_TRUE(device->known) << device->reason;
  EXPECT_EQ(device->ip_version, "12.56.5");
  auto g10 = ocloc().lookup_device("acm-g10");
  ASSERT_TRUE(g10);
  EXPECT_NE(g10->ip_version, device->ip_version);
}

TEST_F(OclocTest, UnknownDeviceIsAResultWithReason)
{
  // bmg (Arc B580) is newer than Debian's ocloc 22.43.
  auto device = ocloc().lookup_device("test_only_no_such_gpu");
  ASSERT_TRUE(device);
  EXPECT_FALSE(device->known);
  EXPECT_NE(device->reason.find("test_only_no_such_gpu"), std::string::npos) << device->reason;
  EXPECT_NE(device->reason.find(ocloc().driver_version()), std::string::npos) << device->reason;
}

TEST_F(OclocTest, ListsAndRangesAreNotSingleDevices)
{
  EXPECT_TRUE(is_single_device_name("acm-g11"));
  EXPECT_TRUE(is_single_device_name("12.56.5"));
  EXPECT_FALSE(is_single_device_name("dg1,acm-g10"));
  EXPECT_FALSE(is_single_device_name("dg1:"));
  EXPECT_FALSE(is_single_device_name("-device"));
  EXPECT_FALSE(is_single_device_name(""));
  auto device = ocloc().lookup_device("dg1,acm-g10");
  ASSERT_TRUE(device);
  EXPECT_FALSE(device->known);
  auto compiled = ocloc().compile(request(k_source, "", "dg1,tgllp"));
  ASSERT_FALSE(compiled);
  EXPECT_EQ(compiled.error().category(), Errc::usage);
}

TEST_F(OclocTest, CompileGivesAZebinThatValidates)
{
  auto out = ocloc().compile(request(k_source, "-DTILE=16", "acm-g11"));
  ASSERT_TRUE(out) << out.error().message();
  ASSERT_GE(out->zebin.size(), 64u);
  EXPECT_EQ(out->zebin.substr(0, 4), "\x7f" "ELF");
  // e_machine 205 = EM_INTELGT: a zebin, not the default patchtokens ELF.
  const auto machine = static_cast<unsigned char>(out->zebin[18]) |
                       (static_cast<unsigned char>(out->zebin[19]) << 8);
  EXPECT_EQ(machine, 205);
  ASSERT_GE(out->spirv.size(), 4u);
  EXPECT_EQ(out->spirv.substr(0, 4), std::string("\x03\x02\x23\x07", 4)); // SPIR-V magic, LE
  auto validation = ocloc().validate(out->zebin, "acm-g11");
  ASSERT_TRUE(validation) << validation.error().message();
  EXPECT_TRUE(validation->valid) << validation->output;
  EXPECT_NE(validation->output.find("2 kernels"), std::string::npos) << validation->output;
}

TEST_F(OclocTest, ValidateRejectsGarbage)
{
  auto validation = ocloc().validate("test_only not a zebin", "acm-g11");
  ASSERT_TRUE(validation);
  EXPECT_FALSE(validation->valid);
  EXPECT_NE(validation->exit_code, 0);
}

TEST_F(OclocTest, SameInputsGiveSameBytes)
{
  const auto same = request(k_source, "-DTILE=8", "tgllp");
  auto first = ocloc().compile(same);
  auto second = ocloc().compile(same);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->zebin, second->zebin);
  EXPECT_EQ(first->spirv, second->spirv);
}

TEST_F(OclocTest, EveryInputChangesTheBytes)
{
  const auto base = request(k_source, "-DTILE=8", "acm-g11");
  auto reference = ocloc().compile(base);
  ASSERT_TRUE(reference);
  auto other_options = base;
  other_options.options = "-DTILE=16";
  auto other_device = base;
  other_device.device = "acm-g10"; // same product family (DG2), other IP version
  const std::string changed_source = std::string(k_source) + "\n__kernel void test_only_x(){}\n";
  auto other_source = base;
  other_source.source = changed_source;
  for (const auto& changed : {other_options, other_device, other_source}) {
    auto out = ocloc().compile(changed);
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_NE(out->zebin, reference->zebin) << changed.options << " " << changed.device;
  }
}

TEST_F(OclocTest, CompileErrorCarriesTheBuildLog)
{
  auto out = ocloc().compile(request("__kernel void test_only_broken( {", "", "tgllp", "broken.cl"));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().category(), Errc::failed);
  EXPECT_NE(out.error().message().find("broken.cl"), std::string::npos);
  EXPECT_NE(out.error().message().find("error"), std::string::npos) << out.error().message();
}

TEST_F(OclocTest, SpirvOnly)
{
  auto spirv = ocloc().compile_spirv(request(k_source, "", "acm-g11"));
  ASSERT_TRUE(spirv) << spirv.error().message();
  EXPECT_EQ(spirv->substr(0, 4), std::string("\x03\x02\x23\x07", 4));
}

TEST(OclocLocate, OverrideMustBeExecutable)
{
  auto scratch = TempDir::create("test_only_ocloc-");
  ASSERT_TRUE(scratch);
  const auto missing = (scratch->path() / "no-ocloc").string();
  ::setenv("PREWARM_OCLOC", missing.c_str(), 1);
  auto ocloc = Ocloc::locate();
  ::unsetenv("PREWARM_OCLOC");
  ASSERT_FALSE(ocloc);
  EXPECT_NE(ocloc.error().message().find("no-ocloc"), std::string::npos);
}

} // namespace
} // namespace prewarm::aot
