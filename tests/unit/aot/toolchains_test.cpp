// SPDX-License-Identifier: Apache-2.0
// The Intel toolchains against the real parts: the host's ocloc (Debian 12:
// 22.43) and the Intel root's (compute runtime 26.27, ./setup.sh intel-root).
// Tests that need the root skip with the reason when it is not made.
#include "aot/toolchains.hpp"

#include "base/files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace prewarm::aot {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Sets (or, with nullopt, unsets) a variable for one test.
class ScopedEnv
{
public:
  ScopedEnv(const char* name, std::optional<std::string> value) : m_name(name)
  {
    if (const char* old = std::getenv(name)) {
      m_old = old;
    }
    value ? ::setenv(name, value->c_str(), 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { m_old ? ::setenv(m_name, m_old->c_str(), 1) : ::unsetenv(m_name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  const char* m_name;
  std::optional<std::string> m_old;
};

constexpr std::string_view k_source = "__kernel void test_only_twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }";

class IntelRootTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    m_root = intel_root();
    if (!intel_root_complete(m_root)) {
      GTEST_SKIP() << "no Intel root at " << m_root << " (./setup.sh intel-root makes it)";
    }
    auto ocloc = Ocloc::at(m_root / "host-bin" / "ocloc");
    ASSERT_TRUE(ocloc) << ocloc.error().message();
    m_ocloc.emplace(std::move(*ocloc));
  }
  std::filesystem::path m_root;
  std::optional<Ocloc> m_ocloc;
};

// 26.27 names its output program.bin and says "Build succeeded.": the
// wrapper reads the binary and keeps the log empty, as with 22.43.
TEST_F(IntelRootTest, CompilesForDevicesDebian12CannotWithItsConventions)
{
  EXPECT_THAT(m_ocloc->driver_version(), StartsWith("26.27."));
  for (const auto& [device, ip] : {std::pair{"bmg", "20.1.0"}, {"mtl-u", "12.70.4"}, {"mtl-h", "12.71.4"},
                                   {"lnl-m", "20.4.4"}, {"ptl-h", "30.0.4"}, {"arl-h", "12.74.4"}}) {
    auto known = m_ocloc->lookup_device(device);
    ASSERT_TRUE(known) << known.error().message();
    EXPECT_TRUE(known->known) << device << ": " << known->reason;
    EXPECT_EQ(known->ip_version, ip) << device;
  }
  OclocCompileRequest request;
  request.source_name = "t.cl";
  request.source = k_source;
  request.device = "bmg";
  auto out = m_ocloc->compile(request);
  ASSERT_TRUE(out) << out.error().message();
  EXPECT_EQ(out->zebin.substr(0, 4), "\x7f" "ELF");
  EXPECT_FALSE(out->spirv.empty());
  EXPECT_EQ(out->log, "");
  auto again = m_ocloc->compile(request);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->zebin, out->zebin); // deterministic, as with 22.43
  auto validation = m_ocloc->validate(out->zebin, "bmg");
  ASSERT_TRUE(validation) << validation.error().message();
  EXPECT_TRUE(validation->valid) << validation->output;
  auto spirv = m_ocloc->compile_spirv(request);
  ASSERT_TRUE(spirv) << spirv.error().message();
  EXPECT_FALSE(spirv->empty());

  request.source = "__kernel void broken( {";
  auto broken = m_ocloc->compile(request);
  ASSERT_FALSE(broken);
  EXPECT_THAT(broken.error().message(), HasSubstr("error"));
}

// Precedence: the host's ocloc for what it knows, the root's for the rest;
// PREWARM_OCLOC alone when set; PREWARM_INTEL_ROOT=none leaves the root out.
TEST_F(IntelRootTest, EachDeviceGoesToTheFirstToolchainThatKnowsIt)
{
  ScopedEnv no_override("PREWARM_OCLOC", std::nullopt);
  ScopedEnv root("PREWARM_INTEL_ROOT", m_root.string());
  const auto toolchains = locate_toolchains();
  ASSERT_FALSE(toolchains.empty());
  EXPECT_EQ(toolchains.back().origin, "Intel root " + m_root.string());
  EXPECT_EQ(toolchains.back().source, manifest::OclocSource::intel_root) << "the plan asks the source, not the text";
  ToolchainChooser chooser;
  auto bmg = chooser.for_device("bmg");
  ASSERT_TRUE(bmg) << bmg.error().message();
  EXPECT_EQ((*bmg)->origin, "Intel root " + m_root.string());
  auto g11 = chooser.for_device("acm-g11");
  ASSERT_TRUE(g11) << g11.error().message();
  EXPECT_EQ((*g11)->origin, toolchains.front().origin); // the host's when it has one
  auto future = chooser.for_device("test-only-gpu");
  ASSERT_FALSE(future);
  EXPECT_EQ(future.error().code(), "E_AOT_UNKNOWN_DEVICE");
  EXPECT_THAT(future.error().message(), HasSubstr("no ocloc knows 'test-only-gpu': tried "));
  EXPECT_THAT(future.error().message(), HasSubstr("(Intel root " + m_root.string() + ")"));
  EXPECT_EQ(describe(**bmg), "ocloc " + m_ocloc->driver_version() + " (Intel root " + m_root.string() + ")");

  {
    ScopedEnv none("PREWARM_INTEL_ROOT", "none");
    for (const auto& t : locate_toolchains()) {
      EXPECT_THAT(t.origin, ::testing::Not(StartsWith("Intel root"))) << t.origin;
    }
  }
  {
    ScopedEnv explicit_root("PREWARM_OCLOC", (m_root / "host-bin" / "ocloc").string());
    const auto only = locate_toolchains();
    ASSERT_EQ(only.size(), 1u);
    EXPECT_EQ(only[0].origin, "PREWARM_OCLOC");
    ToolchainChooser explicit_chooser;
    auto g11_by_root = explicit_chooser.for_device("acm-g11");
    ASSERT_TRUE(g11_by_root) << g11_by_root.error().message();
    EXPECT_EQ((*g11_by_root)->ocloc.driver_version(), m_ocloc->driver_version());
  }
}

TEST(IntelRoot, RootLocationAndCompleteness)
{
  {
    ScopedEnv unset("PREWARM_INTEL_ROOT", std::nullopt);
    EXPECT_EQ(intel_root(), std::filesystem::path(k_default_intel_root));
  }
  {
    ScopedEnv none("PREWARM_INTEL_ROOT", "none");
    EXPECT_TRUE(intel_root().empty());
    EXPECT_FALSE(intel_root_complete(intel_root()));
  }
  auto dir = TempDir::create("test_only_root-");
  ASSERT_TRUE(dir);
  EXPECT_FALSE(intel_root_complete(dir->path())); // a partial root is never used
  ASSERT_TRUE(write_file_atomic(dir->path() / ".complete", "intel-ocloc 26.27.39122.14-1\n"));
  EXPECT_FALSE(intel_root_complete(dir->path())); // no host-bin/ocloc
  std::filesystem::create_directories(dir->path() / "host-bin");
  ASSERT_TRUE(write_file_atomic(dir->path() / "host-bin" / "ocloc", "#!/bin/sh\n", 0755));
  EXPECT_TRUE(intel_root_complete(dir->path()));
}

} // namespace
} // namespace prewarm::aot
