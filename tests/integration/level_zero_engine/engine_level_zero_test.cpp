// SPDX-License-Identifier: Apache-2.0
// The engine on its Level Zero backend, through the REAL loader and the test
// double (not a GPU). With PREWARM_ZE_TEST_EXECUTE_* set, the double runs the
// OpenCL C of each module it is given on the real PoCL device (it finds the
// module's bytes in the AOT store and their source and options in the .meta),
// so the engine's CPU reference checks hold the Level Zero plumbing to account:
// a wrong argument, group size or copy fails a check. The zebins themselves
// never execute; nothing here is validated on Intel hardware.
#include "aot_store_fixture.hpp"
#include "aot/kernel_variants.hpp"
#include "base/files.hpp"
#include "engine/session.hpp"
#include "engine/models/workload.hpp"
#include "level_zero/aot_programs.hpp"
#include "ze_test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files();
}

namespace prewarm::engine::models {
namespace {

namespace fs = std::filesystem;

WorkloadRequest
small_decoder_request()
{
  DecoderArchitecture d;
  d.hidden = 96;
  d.layers = 2;
  d.heads = 6;
  d.kv_heads = 2;
  d.head_dim = 16;
  d.ffn = 200;
  d.vocab = 500;
  WorkloadRequest request;
  request.model = ModelArchitecture{"test-decoder", d};
  request.shapes.batch_sizes = {1, 2};
  request.shapes.prefill_lengths = {7};
  request.shapes.decode_steps = 2;
  request.backend = Backend::level_zero;
  return request;
}

std::size_t
count(std::string_view text, std::string_view what)
{
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// One AOT store (acm-g11, every program of the small decoder at fp32 and at
// bf16) for the whole suite: compiling it is most of the suite's time.
class EngineLevelZeroTest : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    level_zero::testing::use_test_driver();
    const auto request = small_decoder_request();
    auto variants = aot::workload_variants(request.model, Precision::fp32, request.shapes, request.coverage);
    ASSERT_TRUE(variants) << variants.error().message();
    auto bf16 = aot::workload_variants(request.model, Precision::bf16, request.shapes, request.coverage);
    ASSERT_TRUE(bf16) << bf16.error().message();
    s_programs = variants->size();
    s_bf16_programs = bf16->size();
    variants->insert(variants->end(), bf16->begin(), bf16->end());
    const aot::AotTargetSpec targets[] = {prewarm::testing::k_arc_a380};
    s_store.emplace(prewarm::testing::SuiteAotStore::build("test_only_engine_ze-", targets, *variants,
                                                           kernels::embedded_files()));
  }
  static void TearDownTestSuite() { s_store.reset(); }
  static fs::path store() { return s_store->programs(); }

  void SetUp() override
  {
    if (!s_store->skip_reason().empty()) {
      GTEST_SKIP() << s_store->skip_reason();
    }
    ::setenv("PREWARM_ZE_TEST_DRIVER_VERSION", s_store->compiler().c_str(), 1);
    ::setenv("PREWARM_ZE_TEST_EXECUTE_SOURCES", PREWARM_KERNELS_DIR, 1);
    ::setenv("PREWARM_ZE_TEST_EXECUTE_PROGRAMS", store().c_str(), 1);
  }
  void TearDown() override
  {
    ::unsetenv("PREWARM_ZE_TEST_EXECUTE_SOURCES");
    ::unsetenv("PREWARM_ZE_TEST_EXECUTE_PROGRAMS");
    ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a5", 1);
  }

  static inline std::optional<prewarm::testing::SuiteAotStore> s_store;
  static inline std::size_t s_programs = 0;      // fp32
  static inline std::size_t s_bf16_programs = 0;
};

TEST_F(EngineLevelZeroTest, DecoderRunsFromNativeAotModulesAndEveryOpChecks)
{
  level_zero::testing::CallLog log;
  auto request = small_decoder_request();
  request.program_store = store();
  auto report = run_workload(request);
  ASSERT_TRUE(report) << report.error().describe();

  EXPECT_EQ(report->backend, Backend::level_zero);
  EXPECT_NE(report->device_description.find("test double"), std::string::npos) << report->device_description;
  ASSERT_EQ(report->checks.size(), 2u); // batch 1 and 2
  for (const auto& check : report->checks) {
    EXPECT_TRUE(check.passed) << check.name;
    EXPECT_GT(check.op_checks, 10u) << check.name;
  }
  EXPECT_GT(report->launches, 20u);
  // Every program the run built was the acm-g11 zebin, loaded NATIVE.
  EXPECT_EQ(report->aot_served, s_programs);
  EXPECT_EQ(report->aot_fallbacks, 0u);
  for (const auto& line : report->aot_programs) {
    EXPECT_NE(line.find(": aot acm-g11 "), std::string::npos) << line;
  }
  const auto calls = log.text();
  EXPECT_EQ(count(calls, "module-create format=native"), s_programs) << calls;
  EXPECT_EQ(count(calls, "module-create format=spirv"), 0u);
  EXPECT_EQ(count(calls, "executed=yes"), report->launches);
  EXPECT_EQ(to_json(*report)["device"]["backend"], "level-zero");
}

// bf16 through Level Zero: the bf16 variants AOT compiled (ocloc accepts the
// bf16 prelude) are the ones the run asks for, each served NATIVE, and every op
// of the forward pass agrees with its CPU reference at bf16's tolerance.
TEST_F(EngineLevelZeroTest, Bf16DecoderRunsFromNativeAotModulesAndEveryOpChecks)
{
  level_zero::testing::CallLog log;
  auto request = small_decoder_request();
  request.precision = Precision::bf16;
  request.shapes.batch_sizes = {2};
  request.program_store = store();
  auto report = run_workload(request);
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->checks.size(), 1u);
  EXPECT_TRUE(report->checks[0].passed);
  EXPECT_GT(report->checks[0].op_checks, 10u);
  EXPECT_EQ(to_json(*report)["precision"], "bf16");
  EXPECT_EQ(report->aot_served, s_bf16_programs);
  EXPECT_EQ(report->aot_fallbacks, 0u);
  for (const auto& line : report->aot_programs) {
    EXPECT_NE(line.find("-DPRECISION_BF16"), std::string::npos) << line;
  }
  const auto calls = log.text();
  EXPECT_EQ(count(calls, "module-create format=native"), s_bf16_programs) << calls;
  EXPECT_EQ(count(calls, "executed=yes"), report->launches);
}

TEST_F(EngineLevelZeroTest, DeviceNoTargetServesBuildsFromTheStoresSpirvWithTheReason)
{
  ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a0", 1); // an Arc A770: the store has acm-g11 only
  level_zero::testing::CallLog log;
  auto request = small_decoder_request();
  request.program_store = store();
  request.shapes.batch_sizes = {1};
  auto report = run_workload(request);
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->checks.size(), 1u);
  EXPECT_TRUE(report->checks[0].passed);
  EXPECT_EQ(report->aot_served, 0u);
  EXPECT_EQ(report->aot_fallbacks, s_programs);
  for (const auto& line : report->aot_programs) {
    EXPECT_NE(line.find(": fallback: "), std::string::npos) << line;
    EXPECT_NE(line.find("0x56a0"), std::string::npos) << line;
  }
  const auto calls = log.text();
  EXPECT_EQ(count(calls, "module-create format=spirv"), s_programs) << calls;
  EXPECT_EQ(count(calls, "module-create format=native"), 0u);
}

TEST_F(EngineLevelZeroTest, ProgramWithoutSpirvAnywhereIsAnErrorNamingIt)
{
  // No store and no SPIR-V compiler: Level Zero cannot build OpenCL C.
  auto request = small_decoder_request();
  auto report = run_workload(request);
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message().find(".cl ["), std::string::npos) << report.error().message();
}

TEST_F(EngineLevelZeroTest, MissingSpirvIsAskedOfTheCompilerOncePerProgram)
{
  // The store's SPIR-V stands in for ocloc here, so that the double can run it.
  auto programs = level_zero::AotPrograms::open(store());
  ASSERT_TRUE(programs);
  int compiled = 0;
  SessionOptions options;
  options.backend = Backend::level_zero;
  options.spirv_compiler = [&](const ProgramText& program, const SessionDevice& device) -> Result<std::string> {
    ++compiled;
    EXPECT_EQ(device.properties.at("pci-id"), "0x56a5");
    return programs->find_any_spirv(program.source, program.options);
  };
  auto session = Session::open(options);
  ASSERT_TRUE(session) << session.error().describe();
  const auto variants = aot::workload_variants(small_decoder_request().model, Precision::fp32,
                                               small_decoder_request().shapes, Coverage::representative);
  ASSERT_TRUE(variants);
  const auto gemm = std::ranges::find_if(*variants, [](const auto& v) { return v.source_name == "gemm.cl"; });
  ASSERT_NE(gemm, variants->end());
  // Defines from the option string the engine itself produced.
  Defines defines;
  std::string_view rest = gemm->options;
  while (!rest.empty()) {
    const auto end = rest.find(' ');
    auto item = rest.substr(2, end == std::string_view::npos ? std::string_view::npos : end - 2);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      defines.flag(item);
    } else {
      defines.set(item.substr(0, eq), item.substr(eq + 1));
    }
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  ASSERT_EQ(defines.options(), gemm->options);
  ASSERT_TRUE(session->kernel("gemm.cl", "gemm", defines));
  ASSERT_TRUE(session->kernel("gemm.cl", "gemm", defines));
  EXPECT_EQ(compiled, 1);
  EXPECT_TRUE(session->stats().aot_programs.empty()); // no AOT store in this session
}

} // namespace
} // namespace prewarm::engine::models
