// SPDX-License-Identifier: Apache-2.0
// The job report is read strictly: what engine::models::to_json writes comes back
// field for field; a missing, mistyped or unknown field is refused by name
// (the parent once read such a report as zeros).
#include "builtin/job_report.hpp"

#include <gtest/gtest.h>

namespace prewarm::builtin {
namespace {

engine::models::WorkloadReport
sample_report()
{
  engine::models::WorkloadReport r;
  r.model = "tiny";
  r.precision = model::Precision::fp16;
  r.device_description = "0: cpu (PoCL)";
  r.device_properties = {{"vendor", "cpu"}, {"opencl.device", "cpu-x"}};
  r.variants = {"gemm.cl:gemm [-DTILE=16] local=16x16", "rows.cl:softmax local=64"};
  r.launches = 12;
  r.compile_seconds = 0.25;
  r.execute_seconds = 0.125;
  r.first_result_seconds = 1.5;
  r.total_seconds = 2.75;
  r.max_abs_error = 1e-4;
  r.checks.push_back({"decoder batch=1", 1e-4, 2e-4, true, 7});
  r.store = {3, 4, 1, 4};
  r.program_store = "programs";
  r.aot_programs = {"gemm.cl: fallback: none"};
  r.aot_fallbacks = 1;
  r.peak_device_bytes = 4096;
  r.layers_run = 1;
  r.layers_in_model = 2;
  r.notes = "n";
  return r;
}

TEST(JobReport, ReadsBackWhatTheEngineWrites)
{
  const auto written = engine::models::to_json(sample_report());
  const auto read = parse_job_report(written.dump(2), "report.json");
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(engine::models::to_json(*read), written);
  EXPECT_EQ(read->variants.size(), 2u);
  EXPECT_EQ(read->store.hits, 3u);
  EXPECT_EQ(read->store.misses, 4u);
  EXPECT_EQ(read->device_properties.at("opencl.device"), "cpu-x");
  EXPECT_DOUBLE_EQ(read->compile_seconds, 0.25);
}

TEST(JobReport, MissingFieldIsRefusedByName)
{
  auto json = engine::models::to_json(sample_report());
  json["program_store"].erase("hits");
  const auto read = parse_job_report(json.dump(), "report.json");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().category(), Errc::failed);
  EXPECT_NE(read.error().message().find("job report report.json: field 'program_store.hits': missing"),
            std::string::npos)
    << read.error().message();
}

TEST(JobReport, MistypedAndUnknownFieldsAreRefused)
{
  auto mistyped = engine::models::to_json(sample_report());
  mistyped["seconds"]["compile"] = "fast";
  const auto a = parse_job_report(mistyped.dump(), "r");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("field 'seconds.compile': expected a number"), std::string::npos)
    << a.error().message();

  auto unknown = engine::models::to_json(sample_report());
  unknown["extra"] = 1;
  const auto b = parse_job_report(unknown.dump(), "r");
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("field 'extra': unknown field"), std::string::npos) << b.error().message();

  const auto c = parse_job_report("{", "r");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("job report r: not valid JSON"), std::string::npos) << c.error().message();
}

} // namespace
} // namespace prewarm::builtin
