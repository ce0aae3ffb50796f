// SPDX-License-Identifier: Apache-2.0
// The CI job matrix (manifest/ci_matrix.hpp) over hand-made plans: runner
// kind per shard, refusals, and the three output formats.
#include "manifest/ci_matrix.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace prewarm::manifest {
namespace {

const char* const k_registry = R"(version: 1
targets:
  cpu:
    vendor: cpu
    description: the OpenCL CPU device
  h100:
    vendor: nvidia
    description: NVIDIA H100
    sm: 90
  l4:
    vendor: nvidia
    description: NVIDIA L4
    sm: 89
  arc-a770:
    vendor: intel
    description: Intel Arc A770
    ocloc_device: acm-g10
)";

TargetRegistry
registry()
{
  auto parsed = TargetRegistry::parse(k_registry, "test_only registry");
  EXPECT_TRUE(parsed) << parsed.error().message();
  return *parsed;
}

Job
job(const std::string& target, const std::string& model, Strategy strategy)
{
  Job j;
  j.id = target + "/" + model + "/fp32";
  j.target = target;
  j.model = model;
  j.strategy = strategy;
  return j;
}

// The N plans of `jobs` (sorted by id), sharded as plan.hpp does.
std::vector<Plan>
shard_plans(std::vector<Job> jobs, int count)
{
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.id < b.id; });
  std::vector<Plan> plans;
  for (int i = 1; i <= count; ++i) {
    Plan plan;
    plan.shard = Shard{i, count};
    plan.total_jobs = jobs.size();
    for (std::size_t p = 0; p < jobs.size(); ++p) {
      if (plan.shard.includes(p)) {
        plan.jobs.push_back(jobs[p]);
      }
    }
    plans.push_back(plan);
  }
  return plans;
}

TEST(CiMatrix, RunnerKindPerJob)
{
  const auto reg = registry();
  EXPECT_EQ(runner_for_job(job("cpu", "m", Strategy::run), reg), "cpu");
  EXPECT_EQ(runner_for_job(job("arc-a770", "m", Strategy::aot), reg), "cpu"); // ocloc: any runner
  EXPECT_EQ(runner_for_job(job("arc-a770", "m", Strategy::run), reg), "arc-a770");
  EXPECT_EQ(runner_for_job(job("h100", "m", Strategy::skip), reg), "h100"); // needs the device
}

TEST(CiMatrix, ShardsCoverEveryJobOnceWithTheirRunner)
{
  // Sorted ids: cpu/a, cpu/b, h100/a, h100/b => 2 shards: {cpu/a, h100/a}, {cpu/b, h100/b}.
  const auto plans = shard_plans({job("cpu", "a", Strategy::run), job("cpu", "b", Strategy::run),
                                  job("h100", "a", Strategy::skip), job("h100", "b", Strategy::skip)},
                                 2);
  const auto matrix = make_ci_matrix(plans, registry());
  ASSERT_TRUE(matrix) << matrix.error().message();
  ASSERT_EQ(matrix->shards.size(), 2U);
  EXPECT_EQ(matrix->total_jobs, 4U);
  EXPECT_EQ(matrix->shards[0].runner, "h100");
  EXPECT_EQ(matrix->shards[0].job_ids, (std::vector<std::string>{"cpu/a/fp32", "h100/a/fp32"}));
  EXPECT_EQ(matrix->shards[1].targets, (std::vector<std::string>{"cpu", "h100"}));
}

TEST(CiMatrix, CpuAndAotOnlyShardsRunOnCpuRunners)
{
  const auto plans =
    shard_plans({job("cpu", "a", Strategy::run), job("arc-a770", "a", Strategy::aot)}, 1);
  const auto matrix = make_ci_matrix(plans, registry());
  ASSERT_TRUE(matrix) << matrix.error().message();
  EXPECT_EQ(matrix->shards[0].runner, "cpu");
}

TEST(CiMatrix, RefusesAShardThatNeedsTwoGpus)
{
  const auto plans = shard_plans({job("h100", "a", Strategy::skip), job("l4", "a", Strategy::skip)}, 1);
  const auto matrix = make_ci_matrix(plans, registry());
  ASSERT_FALSE(matrix);
  EXPECT_EQ(matrix.error().category(), Errc::usage);
  EXPECT_NE(matrix.error().message().find("h100 and l4"), std::string::npos) << matrix.error().message();
}

TEST(CiMatrix, RefusesMoreShardsThanJobs)
{
  const auto plans = shard_plans({job("cpu", "a", Strategy::run), job("cpu", "b", Strategy::run)}, 3);
  const auto matrix = make_ci_matrix(plans, registry());
  ASSERT_FALSE(matrix);
  EXPECT_EQ(matrix.error().category(), Errc::usage);
}

TEST(CiMatrix, FormatsParse)
{
  const auto plans = shard_plans({job("cpu", "a", Strategy::run), job("cpu", "b", Strategy::run),
                                  job("h100", "a", Strategy::skip)},
                                 3);
  const auto matrix = make_ci_matrix(plans, registry());
  ASSERT_TRUE(matrix) << matrix.error().message();

  const auto json = nlohmann::json::parse(format_ci_matrix(*matrix, CiFormat::json));
  EXPECT_EQ(json["shards"], 3);
  EXPECT_EQ(json["include"][2]["runner"], "h100");
  EXPECT_EQ(json["include"][2]["jobs"][0], "h100/a/fp32");

  const std::string github = format_ci_matrix(*matrix, CiFormat::github_matrix);
  EXPECT_EQ(github.find('\n'), github.size() - 1) << "one line for $GITHUB_OUTPUT";
  const auto gh = nlohmann::json::parse(github);
  EXPECT_EQ(gh["include"][0]["shard"], "1/3");
  EXPECT_EQ(gh["include"][0]["slug"], "1-of-3");

  CiPipelineOptions options;
  options.manifest_path = "manifests/it's here.yaml";
  const std::string gitlab = format_ci_matrix(*matrix, CiFormat::gitlab, options);
  EXPECT_NE(gitlab.find("prewarm-shard-3-of-3:\n  extends: .prewarm-shard\n  tags: [\"h100\"]"), std::string::npos)
    << gitlab;
  EXPECT_NE(gitlab.find("needs: [prewarm-shard-1-of-3, prewarm-shard-2-of-3, prewarm-shard-3-of-3]"),
            std::string::npos)
    << gitlab;
  // The path is shell-quoted inside a YAML double-quoted scalar.
  EXPECT_NE(gitlab.find(R"('manifests/it'\\''s here.yaml')"), std::string::npos) << gitlab;
}

TEST(CiMatrix, ParsesFormatNames)
{
  EXPECT_EQ(parse_ci_format("json").value(), CiFormat::json);
  EXPECT_EQ(parse_ci_format("github-matrix").value(), CiFormat::github_matrix);
  EXPECT_EQ(parse_ci_format("gitlab").value(), CiFormat::gitlab);
  EXPECT_FALSE(parse_ci_format("jenkins"));
}

} // namespace
} // namespace prewarm::manifest
