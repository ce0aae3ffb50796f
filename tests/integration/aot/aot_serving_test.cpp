// SPDX-License-Identifier: Apache-2.0
// An AOT programs directory made by prewarm/aot with the REAL ocloc, served
// by the runtime's Level Zero session through the REAL loader to the test
// double driver (tests/support/ze_test_driver; it records, runs no GPU code).
#include "aot_store_fixture.hpp"
#include "base/digest.hpp"
#include "base/files.hpp"
#include "level_zero/aot_programs.hpp"
#include "level_zero/session.hpp"
#include "ze_test_env.hpp"

#include <gtest/gtest.h>

#include <span>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files();
}

namespace prewarm {
namespace {

namespace fs = std::filesystem;
using level_zero::ZeSession;

// ocloc 22.43's product-family note values (checked in tests/unit/level_zero).
constexpr const char* k_dg2_family = "1270";
constexpr const char* k_tgllp_family = "29";

class AotServingTest : public ::testing::Test
{
protected:
  // One AOT build for the suite: arc-a380 (acm-g11) and iris-xe (tgllp).
  static void SetUpTestSuite()
  {
    level_zero::testing::use_test_driver();
    const aot::AotTargetSpec targets[] = {prewarm::testing::k_arc_a380, prewarm::testing::k_iris_xe};
    // Only the programs this test loads: gemm and rmsnorm as the engine builds them.
    const std::vector<aot::KernelVariant> variants = {{"gemm.cl", "-DTILE=16 -DTRANSPOSE_B=1"},
                                                      {"rmsnorm.cl", "-DWG=64"}};
    s_store.emplace(prewarm::testing::SuiteAotStore::build("test_only_aot_serving-", targets, variants,
                                                           kernels::embedded_files()));
  }
  static void TearDownTestSuite() { s_store.reset(); }

  void SetUp() override
  {
    if (!s_store->skip_reason().empty()) {
      GTEST_SKIP() << s_store->skip_reason();
    }
    ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a5", 1);
    ::setenv("PREWARM_ZE_TEST_PRODUCT_FAMILY", k_dg2_family, 1);
    ::setenv("PREWARM_ZE_TEST_DRIVER_VERSION", s_store->compiler().c_str(), 1);
  }
  void TearDown() override
  {
    ::unsetenv("PREWARM_ZE_TEST_PRODUCT_FAMILY");
    ::unsetenv("PREWARM_ZE_TEST_DRIVER_VERSION");
  }

  static fs::path programs() { return s_store->programs(); }

  static level_zero::ZeProgramSource gemm()
  {
    level_zero::ZeProgramSource p;
    p.source_name = "gemm.cl";
    p.source = *find_embedded(kernels::embedded_files(), "gemm.cl");
    p.options = "-DTILE=16 -DTRANSPOSE_B=1";
    return p; // no SPIR-V of its own: the store's is the fallback
  }

  Result<ZeSession> open_session()
  {
    level_zero::ZeSessionOptions options;
    options.device_selector = "0";
    options.aot_programs = programs();
    return ZeSession::open(options);
  }

  static inline std::optional<prewarm::testing::SuiteAotStore> s_store;
};

TEST_F(AotServingTest, PciId56a5SelectsAcmG11AndLoadsNative)
{
  level_zero::testing::CallLog log;
  auto session = open_session();
  ASSERT_TRUE(session) << session.error().message();
  EXPECT_EQ(session->device().properties.at("pci-id"), "0x56a5");

  auto all = level_zero::AotPrograms::open(programs());
  ASSERT_TRUE(all);
  auto selection = all->select(session->device().properties);
  ASSERT_NE(selection.target, nullptr) << selection.reason;
  EXPECT_EQ(selection.target->ocloc_device, "acm-g11");
  auto lookup = all->find(*selection.target, gemm().source, gemm().options);
  ASSERT_TRUE(lookup.program) << lookup.reason;

  auto kernel = session->kernel(gemm(), "gemm");
  ASSERT_TRUE(kernel) << kernel.error().message();
  EXPECT_EQ(session->stats().native_modules, 1u);
  EXPECT_EQ(session->stats().spirv_modules, 0u);
  EXPECT_TRUE(session->stats().fallbacks.empty());
  const auto text = log.text();
  // The bytes handed to the driver are exactly the acm-g11 zebin.
  EXPECT_NE(text.find("format=native size=" + std::to_string(lookup.program->zebin.size()) + " sha256=" +
                      sha256_hex(lookup.program->zebin) + " flags=\"\" result=accepted"),
            std::string::npos)
    << text;
  EXPECT_EQ(text.find("format=spirv"), std::string::npos) << text;
}

TEST_F(AotServingTest, TigerLakeHostGetsTheTgllpBinary)
{
  ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x9a49", 1);
  ::setenv("PREWARM_ZE_TEST_PRODUCT_FAMILY", k_tgllp_family, 1);
  auto session = open_session();
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->kernel(gemm(), "gemm"));
  EXPECT_EQ(session->stats().native_modules, 1u);
}

TEST_F(AotServingTest, CorruptedBinaryFallsBackToSpirvWithReason)
{
  // A copy of the store with the acm-g11 gemm zebin damaged.
  auto copy = TempDir::create("test_only_corrupt-");
  ASSERT_TRUE(copy);
  fs::copy(programs(), copy->path() / "programs", fs::copy_options::recursive);
  auto all = level_zero::AotPrograms::open(copy->path() / "programs");
  ASSERT_TRUE(all);
  const level_zero::AotTarget* g11 = nullptr;
  for (const auto& t : all->targets()) {
    if (t.ocloc_device == "acm-g11") {
      g11 = &t;
    }
  }
  ASSERT_NE(g11, nullptr);
  const auto key = level_zero::AotProgramKey::for_target(*g11, gemm().source, gemm().options).digest();
  const auto zebin_path = g11->dir / (key + ".zebin");
  auto bytes = read_file(zebin_path.string());
  ASSERT_TRUE(bytes);
  (*bytes)[18] = 0x3e; // e_machine x86-64: not a zebin any more
  ASSERT_TRUE(write_file_atomic(zebin_path, *bytes));

  level_zero::testing::CallLog log;
  level_zero::ZeSessionOptions options;
  options.device_selector = "0";
  options.aot_programs = copy->path() / "programs";
  auto session = ZeSession::open(options);
  ASSERT_TRUE(session);
  auto kernel = session->kernel(gemm(), "gemm");
  ASSERT_TRUE(kernel) << kernel.error().message();
  EXPECT_EQ(session->stats().native_modules, 0u);
  EXPECT_EQ(session->stats().spirv_modules, 1u);
  ASSERT_EQ(session->stats().fallbacks.size(), 1u);
  const auto& reason = session->stats().fallbacks[0];
  EXPECT_NE(reason.find("ZE_RESULT_ERROR_INVALID_NATIVE_BINARY"), std::string::npos) << reason;
  EXPECT_NE(reason.find("not a zebin"), std::string::npos) << reason;
  const auto text = log.text();
  EXPECT_NE(text.find("result=rejected"), std::string::npos);
  EXPECT_NE(text.find("format=spirv"), std::string::npos);
}

TEST_F(AotServingTest, WrongFamilyForThePciIdFallsBack)
{
  // A registry error (pci id mapped to the wrong ocloc device) is caught by
  // the driver, not trusted: 0x56a5 but the device is a Tiger Lake.
  ::setenv("PREWARM_ZE_TEST_PRODUCT_FAMILY", k_tgllp_family, 1);
  auto session = open_session();
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->kernel(gemm(), "gemm"));
  EXPECT_EQ(session->stats().spirv_modules, 1u);
  ASSERT_EQ(session->stats().fallbacks.size(), 1u);
  EXPECT_NE(session->stats().fallbacks[0].find("product family"), std::string::npos);
}

TEST_F(AotServingTest, UnknownPciIdAndOtherDriverUseSpirvWithReason)
{
  ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a0", 1); // an A770: no target in this store
  {
    auto session = open_session();
    ASSERT_TRUE(session);
    ASSERT_TRUE(session->kernel(gemm(), "gemm"));
    EXPECT_EQ(session->stats().spirv_modules, 1u);
    ASSERT_EQ(session->stats().fallbacks.size(), 1u);
    EXPECT_NE(session->stats().fallbacks[0].find("no AOT target lists pci-id 0x56a0"), std::string::npos)
      << session->stats().fallbacks[0];
  }
  ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a5", 1);
  ::setenv("PREWARM_ZE_TEST_DRIVER_VERSION", "23.5.25593", 1);
  {
    auto session = open_session();
    ASSERT_TRUE(session);
    ASSERT_TRUE(session->kernel(gemm(), "gemm"));
    EXPECT_EQ(session->stats().native_modules, 0u);
    ASSERT_EQ(session->stats().fallbacks.size(), 1u);
    EXPECT_NE(session->stats().fallbacks[0].find("23.5.25593"), std::string::npos) << session->stats().fallbacks[0];
  }
}

TEST_F(AotServingTest, ProgramNotInTheStoreWithoutSpirvIsAnError)
{
  auto session = open_session();
  ASSERT_TRUE(session);
  auto program = gemm();
  program.options = "-DTILE=8 -DTRANSPOSE_B=1"; // never compiled ahead of time
  auto kernel = session->kernel(program, "gemm");
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.error().message().find("no SPIR-V"), std::string::npos) << kernel.error().message();
}

} // namespace
} // namespace prewarm
