// SPDX-License-Identifier: Apache-2.0
// run_workload end to end on the real device with a small decoder.
#include "base/files.hpp"
#include "engine/workload.hpp"

#include <gtest/gtest.h>

namespace prewarm::engine {
namespace {

WorkloadRequest
small_decoder_request()
{
  DecoderArchitecture d;
  d.hidden = 96;
  d.layers = 3;
  d.heads = 6;
  d.kv_heads = 2;
  d.head_dim = 16;
  d.ffn = 200;
  d.vocab = 1000;
  WorkloadRequest request;
  request.model = ModelArchitecture{"test-decoder", d};
  request.shapes.batch_sizes = {1, 2};
  request.shapes.prefill_lengths = {7};
  request.shapes.decode_steps = 2;
  return request;
}

bool
has_device()
{
  return static_cast<bool>(opencl::enumerate_devices());
}

TEST(Workload, SmallDecoderRunsChecksAndReports)
{
  if (!has_device()) {
    GTEST_SKIP() << "no OpenCL device";
  }
  auto report = run_workload(small_decoder_request());
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->checks.size(), 2u * (1 + 2)); // per batch size: prefill + 2 decode steps
  for (const auto& c : report->checks) {
    EXPECT_TRUE(c.passed) << c.name;
  }
  EXPECT_LT(report->max_abs_error, 1e-3);
  EXPECT_GT(report->first_result_seconds, 0.0);
  EXPECT_LE(report->first_result_seconds, report->total_seconds);
  EXPECT_TRUE(report->representative);
  EXPECT_EQ(report->layers_run, 1);
  EXPECT_GE(report->variants.size(), 5u); // gemm (both B layouts), softmax, rmsnorm, silu_mul
  EXPECT_GT(report->peak_device_bytes, 0u);
  const auto json = to_json(*report);
  EXPECT_EQ(json["model"], "test-decoder");
  EXPECT_EQ(json["precision"], "fp32");
  EXPECT_EQ(json["variants"].size(), report->variants.size());
  EXPECT_NE(to_text(*report).find("first result:"), std::string::npos);
}

TEST(Workload, FullCoverageRunsEveryLayer)
{
  if (!has_device()) {
    GTEST_SKIP() << "no OpenCL device";
  }
  auto request = small_decoder_request();
  request.coverage = Coverage::full;
  request.shapes.batch_sizes = {1};
  request.shapes.decode_steps = 1;
  auto report = run_workload(request);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->layers_run, 3);
  EXPECT_FALSE(report->representative);
}

TEST(Workload, SecondRunIsServedFromTheProgramStore)
{
  if (!has_device()) {
    GTEST_SKIP() << "no OpenCL device";
  }
  auto scratch = TempDir::create("prewarm-workload-test-");
  ASSERT_TRUE(scratch);
  auto request = small_decoder_request();
  request.shapes.batch_sizes = {1};
  request.program_store = scratch->path() / "store";
  auto first = run_workload(request);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_GT(first->store.misses, 0u);
  EXPECT_EQ(first->store.captured, first->store.misses);
  request.store_mode = store::StoreMode::read_only;
  auto second = run_workload(request);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(second->store.hits, first->store.misses);
  EXPECT_EQ(second->store.misses, 0u);
  EXPECT_EQ(second->variants, first->variants);
}

TEST(Workload, UnsupportedPrecisionAndModelKindsAreNamedErrors)
{
  if (!has_device()) {
    GTEST_SKIP() << "no OpenCL device";
  }
  auto request = small_decoder_request();
  request.precision = Precision::int8;
  auto report = run_workload(request);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), "E_UNSUPPORTED_PRECISION");

  WorkloadRequest cnn;
  cnn.model = ModelArchitecture{"test-cnn", CnnArchitecture{}};
  auto cnn_report = run_workload(cnn);
  ASSERT_FALSE(cnn_report);
  EXPECT_EQ(cnn_report.error().code(), "E_UNSUPPORTED_MODEL");
}

} // namespace
} // namespace prewarm::engine
