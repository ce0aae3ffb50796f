// SPDX-License-Identifier: Apache-2.0
// The engine's hook into AOT serving: a Session whose program store directory
// holds AOT programs (made by the real ocloc) asks them first for every
// program, records which path served it, and on the real PoCL device (not
// Intel) falls back to the program store, and the GEMM it runs is right.
// No Intel GPU here: the AOT-served path itself is not exercised on hardware.
#include "aot/aot_compiler.hpp"
#include "base/files.hpp"
#include "engine/gemm.hpp"
#include "engine/session.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files();
}

namespace prewarm::engine {
namespace {

namespace fs = std::filesystem;

// What run_gemm builds for an fp32 linear layer at tile 16.
constexpr std::string_view k_gemm_options = "-DTILE=16 -DTRANSPOSE_B=1";

// C = A * B^T for 16x16x16 through the session; checked against the CPU.
void
run_checked_gemm(Session& session)
{
  constexpr int n = 16;
  std::vector<float> a(n * n), b(n * n), c(n * n, 0.0f), expected(n * n, 0.0f);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>((i * 7) % 13) - 6.0f;
    b[i] = static_cast<float>((i * 5) % 11) - 5.0f;
  }
  auto da = session.allocate(a.size() * sizeof(float));
  auto db = session.allocate(b.size() * sizeof(float));
  auto dc = session.allocate(c.size() * sizeof(float));
  ASSERT_TRUE(da && db && dc);
  ASSERT_TRUE(session.write(*da, std::span<const float>(a)));
  ASSERT_TRUE(session.write(*db, std::span<const float>(b)));
  GemmArgs args;
  args.m = args.n = args.k = n;
  args.a = {&*da, 0, n, 0};
  args.b = {&*db, 0, n, 0};
  args.c = {&*dc, 0, n, 0};
  args.b_layout = BLayout::transposed;
  auto status = run_gemm(session, args);
  ASSERT_TRUE(status) << status.error().message();
  ASSERT_TRUE(session.read(*dc, std::span<float>(c)));
  reference_gemm(args, a.data(), b.data(), expected.data(), nullptr);
  for (int i = 0; i < n * n; ++i) {
    ASSERT_NEAR(c[i], expected[i], 1e-3) << i;
  }
}

class EngineAotTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = TempDir::create("test_only_engine_aot-");
    ASSERT_TRUE(dir);
    scratch.emplace(std::move(*dir));
  }
  fs::path store_dir() const { return scratch->path() / "programs"; }

  std::optional<TempDir> scratch;
};

TEST_F(EngineAotTest, NonIntelDeviceFallsBackToTheStoreWithTheReasonRecorded)
{
  auto ocloc = aot::Ocloc::locate();
  if (!ocloc) {
    GTEST_SKIP() << "ocloc not usable: " << ocloc.error().message();
  }
  const aot::AotTargetSpec target{"arc-a380", "acm-g11", "12.56.5", {"0x56a5"}};
  const std::vector<aot::KernelVariant> variants = {{"gemm.cl", std::string(k_gemm_options)}};
  auto report = aot::compile_targets(*ocloc, std::span(&target, 1), variants, kernels::embedded_files(), store_dir(), {});
  ASSERT_TRUE(report) << report.error().message();

  auto session = Session::open({.device_selector = "", .program_store = store_dir()});
  if (!session) {
    GTEST_SKIP() << "no OpenCL device: " << session.error().message();
  }
  const auto vendor = session->device().properties.find("vendor");
  ASSERT_TRUE(vendor == session->device().properties.end() || vendor->second != "intel")
    << "this test expects a non-Intel device (PoCL)";
  run_checked_gemm(*session);

  const auto& stats = session->stats();
  ASSERT_EQ(stats.aot_programs.size(), 1u);
  EXPECT_EQ(stats.aot_programs[0].rfind("gemm.cl [" + std::string(k_gemm_options) + "]: fallback: ", 0), 0u)
    << stats.aot_programs[0];
  EXPECT_NE(stats.aot_programs[0].find("AOT programs are for Intel GPUs"), std::string::npos) << stats.aot_programs[0];
  EXPECT_EQ(stats.aot_served, 0u);
  EXPECT_EQ(stats.aot_fallbacks, 1u);
  EXPECT_EQ(stats.store.misses, 1u); // the fallback went through the program store
  ASSERT_TRUE(session->capture_programs());
  EXPECT_EQ(session->stats().store.captured, 1u);
}

TEST_F(EngineAotTest, StoreWithoutAotProgramsRecordsNothing)
{
  auto session = Session::open({.device_selector = "", .program_store = store_dir()});
  if (!session) {
    GTEST_SKIP() << "no OpenCL device: " << session.error().message();
  }
  run_checked_gemm(*session);
  EXPECT_TRUE(session->stats().aot_programs.empty());
  EXPECT_EQ(session->stats().aot_fallbacks, 0u);
  EXPECT_EQ(session->stats().store.misses, 1u);
}

TEST_F(EngineAotTest, MalformedAotRecordCostsTheAotBinariesNotTheRun)
{
  fs::create_directories(store_dir() / "aot" / "acm-g11");
  ASSERT_TRUE(write_file_atomic(store_dir() / "aot" / "acm-g11" / "target.arc-a380", "test_only not a record\n"));
  auto session = Session::open({.device_selector = "", .program_store = store_dir()});
  if (!session) {
    GTEST_SKIP() << "no OpenCL device: " << session.error().message();
  }
  run_checked_gemm(*session);
  EXPECT_TRUE(session->stats().aot_programs.empty());
  EXPECT_EQ(session->stats().store.misses, 1u);
}

} // namespace
} // namespace prewarm::engine
