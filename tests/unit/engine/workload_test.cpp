// SPDX-License-Identifier: Apache-2.0
// run_workload end to end on the real device with a small decoder.
#include "base/files.hpp"
#include "engine/models/workload.hpp"
#include "opencl/device.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace prewarm::engine::models {
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
  // One forward pass per batch size, every op output in it checked.
  ASSERT_EQ(report->checks.size(), 2u);
  for (const auto& c : report->checks) {
    EXPECT_TRUE(c.passed) << c.name;
    EXPECT_GE(c.op_checks, 15u) << c.name;
  }
  // Prefill runs the tiled GEMM, decode the GEMV.
  const auto has_variant = [&](std::string_view needle) {
    return std::ranges::any_of(report->variants, [&](const std::string& v) { return v.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has_variant("gemm.cl:gemm"));
  EXPECT_TRUE(has_variant("gemv.cl:"));
  EXPECT_LT(report->max_abs_error, 1e-3);
  EXPECT_GT(report->first_result_seconds, 0.0);
  EXPECT_LE(report->first_result_seconds, report->total_seconds);
  // The device path and the host work split the first result: the device
  // path holds at least the session open and some compile and execute time,
  // the host work at least the CPU references of the checks above.
  EXPECT_GT(report->session_open_seconds, 0.0);
  EXPECT_GT(report->first_result_device_seconds, report->session_open_seconds);
  EXPECT_LE(report->first_result_device_seconds, report->first_result_seconds);
  EXPECT_GT(report->first_result_host_seconds, 0.0);
  EXPECT_NEAR(report->first_result_device_seconds + report->first_result_host_seconds, report->first_result_seconds, 1e-9);
  EXPECT_EQ(report->layers_run, 1);
  // gemm, gemv, rmsnorm, rope, kv cache write, prefill and decode attention,
  // residual, silu_mul, embedding at least.
  EXPECT_GE(report->variants.size(), 10u);
  EXPECT_GT(report->peak_device_bytes, 0u);
  const auto json = to_json(*report);
  EXPECT_EQ(json["model"], "test-decoder");
  EXPECT_EQ(json["precision"], "fp32");
  EXPECT_EQ(json["variants"].size(), report->variants.size());
  EXPECT_NE(to_text(*report).find("first result:"), std::string::npos);
  EXPECT_NE(to_text(*report).find("device path:"), std::string::npos);
  EXPECT_DOUBLE_EQ(json["seconds"]["first_result_device"].get<double>(), report->first_result_device_seconds);
  EXPECT_DOUBLE_EQ(json["seconds"]["first_result_host"].get<double>(), report->first_result_host_seconds);
  EXPECT_GT(json["accuracy"]["op_checks"].get<std::size_t>(), 30u);
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

TEST(Workload, Fp16Bf16AndInt8RunWithTheirOwnKernelVariants)
{
  if (!has_device()) {
    GTEST_SKIP() << "no OpenCL device";
  }
  auto request = small_decoder_request();
  request.shapes.batch_sizes = {1};
  request.shapes.decode_steps = 1;
  auto fp32 = run_workload(request);
  ASSERT_TRUE(fp32) << fp32.error().message();
  for (auto precision : {Precision::fp16, Precision::bf16, Precision::int8}) {
    request.precision = precision;
    auto report = run_workload(request);
    ASSERT_TRUE(report) << to_string(precision) << ": " << report.error().message();
    EXPECT_EQ(report->precision, precision);
    const std::string define = precision == Precision::bf16 ? "-DPRECISION_BF16" : "-DPRECISION_FP16";
    bool has_own_variant = false;
    for (const auto& v : report->variants) {
      has_own_variant = has_own_variant || v.find(define) != std::string::npos;
    }
    EXPECT_TRUE(has_own_variant) << to_string(precision);
    EXPECT_TRUE(std::ranges::all_of(report->checks, [](const auto& check) { return check.passed; }));
    if (precision == Precision::int8) {
      bool has_w8a8 = false;
      for (const auto& v : report->variants) {
        has_w8a8 = has_w8a8 || v.find("w8a8") != std::string::npos;
      }
      EXPECT_TRUE(has_w8a8);
    }
    EXPECT_NE(report->variants, fp32->variants);
  }
}

TEST(Workload, CnnAndGptqStackRun)
{
  if (!has_device()) {
    GTEST_SKIP() << "no OpenCL device";
  }
  CnnArchitecture cnn;
  cnn.input_width = 20;
  cnn.input_height = 8;
  cnn.input_channels = 3;
  cnn.layers = {{8, 3, 1, 1, 0}, {8, 3, 1, 1, 2}};
  cnn.classes = 5;
  WorkloadRequest request;
  request.model = ModelArchitecture{"test-cnn", cnn};
  auto cnn_report = run_workload(request);
  ASSERT_TRUE(cnn_report) << cnn_report.error().message();
  EXPECT_EQ(cnn_report->checks.size(), 1u);
  EXPECT_TRUE(std::ranges::any_of(cnn_report->variants, [](const std::string& v) { return v.find("conv.cl") != std::string::npos; }));

  GptqStackArchitecture gptq;
  gptq.group_size = 32;
  gptq.layers = {{64, 96}, {96, 64}};
  request.model = ModelArchitecture{"test-gptq", gptq};
  request.precision = Precision::fp16;
  auto gptq_report = run_workload(request);
  ASSERT_TRUE(gptq_report) << gptq_report.error().message();
  EXPECT_TRUE(std::ranges::any_of(gptq_report->variants, [](const std::string& v) { return v.find("gptq.cl") != std::string::npos; }));
  request.precision = Precision::bf16; // GPTQ's activations in bf16, as fp16
  auto gptq_bf16 = run_workload(request);
  ASSERT_TRUE(gptq_bf16) << gptq_bf16.error().message();
  EXPECT_TRUE(std::ranges::any_of(gptq_bf16->variants, [](const std::string& v) {
    return v.find("gptq.cl") != std::string::npos && v.find("-DPRECISION_BF16") != std::string::npos;
  }));
  request.precision = Precision::int8;
  auto refused = run_workload(request);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "E_UNSUPPORTED_PRECISION");
}

TEST(Workload, InvalidArchitectureIsAUsageError)
{
  if (!has_device()) {
    GTEST_SKIP() << "no OpenCL device";
  }
  auto request = small_decoder_request();
  std::get<DecoderArchitecture>(request.model.body).kv_heads = 4; // 6 heads over 4 KV heads
  auto report = run_workload(request);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().category(), Errc::usage);
}

} // namespace
} // namespace prewarm::engine::models
