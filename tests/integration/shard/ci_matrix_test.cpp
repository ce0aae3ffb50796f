// SPDX-License-Identifier: Apache-2.0
// The shard partition (manifest/shard_partition.hpp) and the CI job matrix
// (manifest/ci_matrix.hpp) over hand-made jobs: runner kind per job, shards
// that each run on one runner, refusals, and the three output formats.
#include "manifest/ci_matrix.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

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

// A job as make_plan makes it: the runner kind comes from the target, the
// model (built-in or command) and ocloc, as shard_partition.hpp says.
Job
job(const std::string& target, const std::string& model, Strategy strategy, const std::string& runner = "cpu")
{
  Job j;
  j.id = target + "/" + model + "/fp32";
  j.target = target;
  j.model = model;
  j.strategy = strategy;
  j.runner = runner;
  return j;
}

// The N plans of `jobs` (sorted by id), partitioned as make_plan does.
std::vector<Plan>
shard_plans(std::vector<Job> jobs, int count)
{
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.id < b.id; });
  std::vector<std::string> runners;
  for (const auto& j : jobs) {
    runners.push_back(j.runner);
  }
  const auto owners = partition_jobs(runners, count);
  EXPECT_TRUE(owners) << owners.error().message();
  std::vector<Plan> plans;
  for (int i = 1; i <= count; ++i) {
    Plan plan;
    plan.shard = Shard{i, count};
    plan.total_jobs = jobs.size();
    for (std::size_t p = 0; owners && p < jobs.size(); ++p) {
      if ((*owners)[p] == i - 1) {
        plan.jobs.push_back(jobs[p]);
      }
    }
    plans.push_back(plan);
  }
  return plans;
}

ModelSpec
model(const std::string& name, bool builtin)
{
  ModelSpec spec;
  spec.name = name;
  if (builtin) {
    spec.architecture.emplace();
  }
  return spec;
}

TEST(ShardPartition, RunnerKindPerJob)
{
  const auto reg = registry();
  OclocInfo ocloc;
  ocloc.path = "/usr/bin/ocloc";
  ocloc.known_devices = {"acm-g10"};
  const auto builtin = model("m", true);
  const auto command = model("c", false);
  EXPECT_EQ(runner_kind(*reg.find("cpu"), builtin, ocloc), "cpu");
  EXPECT_EQ(runner_kind(*reg.find("arc-a770"), builtin, ocloc), "cpu");          // ocloc: any runner
  EXPECT_EQ(runner_kind(*reg.find("arc-a770"), command, ocloc), "arc-a770");     // runs on the device
  EXPECT_EQ(runner_kind(*reg.find("arc-a770"), builtin, OclocInfo{}), "arc-a770"); // no ocloc for it
  EXPECT_EQ(runner_kind(*reg.find("h100"), builtin, ocloc), "h100");             // caches made on the device
}

// Every shard needs one runner kind; every job lands in exactly one shard.
TEST(ShardPartition, EachShardRunsOnOneRunner)
{
  std::vector<std::string> runners;
  for (int i = 0; i < 7; ++i) runners.push_back("cpu");
  for (int i = 0; i < 4; ++i) runners.push_back("h100");
  for (int i = 0; i < 2; ++i) runners.push_back("l4");
  for (int n = 3; n <= 13; ++n) {
    const auto owners = partition_jobs(runners, n);
    ASSERT_TRUE(owners) << n << ": " << owners.error().message();
    std::vector<std::set<std::string>> kinds(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < runners.size(); ++i) {
      const int owner = (*owners)[i];
      ASSERT_GE(owner, 0);
      ASSERT_LT(owner, n);
      kinds[static_cast<std::size_t>(owner)].insert(runners[i]);
    }
    for (int s = 0; s < n; ++s) {
      EXPECT_EQ(kinds[static_cast<std::size_t>(s)].size(), 1U) << "N=" << n << " shard " << s + 1;
    }
  }
  // 3 shards for 3 kinds: one each, in group order (cpu, h100, l4).
  const auto three = partition_jobs(runners, 3);
  ASSERT_TRUE(three);
  EXPECT_EQ((*three)[0], 0);
  EXPECT_EQ((*three)[7], 1);
  EXPECT_EQ((*three)[11], 2);
  // 5 shards: cpu (7 jobs) and h100 (4) gain one each before l4 (2) would.
  const auto five = partition_jobs(runners, 5);
  ASSERT_TRUE(five);
  EXPECT_EQ((*five)[0], 0);
  EXPECT_EQ((*five)[1], 1);
  EXPECT_EQ((*five)[7], 2);
  EXPECT_EQ((*five)[8], 3);
  EXPECT_EQ((*five)[11], 4);
  EXPECT_EQ((*five)[12], 4);
}

// As many shards as GPU kinds: the cpu jobs join them (any runner can do them).
TEST(ShardPartition, CpuJobsShareTheGpuShardsWhenNoShardIsLeft)
{
  const std::vector<std::string> runners = {"cpu", "cpu", "cpu", "h100", "l4"};
  const auto owners = partition_jobs(runners, 2);
  ASSERT_TRUE(owners) << owners.error().message();
  EXPECT_EQ(*owners, (std::vector<int>{0, 1, 0, 0, 1}));
}

TEST(ShardPartition, RefusesFewerShardsThanGpuKinds)
{
  const auto owners = partition_jobs(std::vector<std::string>{"h100", "l4", "cpu"}, 1 + 0);
  ASSERT_TRUE(owners) << "one shard is the whole plan";
  const std::vector<std::string> three_gpus = {"h100", "l4", "a100"};
  const auto refused = partition_jobs(three_gpus, 2);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().category(), Errc::usage);
  EXPECT_NE(refused.error().message().find("3 different GPU runners (a100, h100, l4)"), std::string::npos)
    << refused.error().message();
}

TEST(CiMatrix, ShardsCoverEveryJobOnceWithTheirRunner)
{
  const auto plans = shard_plans({job("cpu", "a", Strategy::run), job("cpu", "b", Strategy::run),
                                  job("h100", "a", Strategy::skip, "h100"), job("h100", "b", Strategy::skip, "h100")},
                                 2);
  const auto matrix = make_ci_matrix(plans);
  ASSERT_TRUE(matrix) << matrix.error().message();
  ASSERT_EQ(matrix->shards.size(), 2U);
  EXPECT_EQ(matrix->total_jobs, 4U);
  EXPECT_EQ(matrix->shards[0].runner, "cpu");
  EXPECT_EQ(matrix->shards[0].job_ids, (std::vector<std::string>{"cpu/a/fp32", "cpu/b/fp32"}));
  EXPECT_EQ(matrix->shards[1].runner, "h100");
  EXPECT_EQ(matrix->shards[1].targets, (std::vector<std::string>{"h100"}));
}

TEST(CiMatrix, CpuAndAotOnlyShardsRunOnCpuRunners)
{
  const auto plans =
    shard_plans({job("cpu", "a", Strategy::run), job("arc-a770", "a", Strategy::aot)}, 1);
  const auto matrix = make_ci_matrix(plans);
  ASSERT_TRUE(matrix) << matrix.error().message();
  EXPECT_EQ(matrix->shards[0].runner, "cpu");
}

TEST(CiMatrix, ReportsAShardThatNeedsTwoGpus)
{
  // One shard (the whole plan) with two GPU kinds: no single runner can build it.
  const auto plans =
    shard_plans({job("h100", "a", Strategy::skip, "h100"), job("l4", "a", Strategy::skip, "l4")}, 1);
  const auto matrix = make_ci_matrix(plans);
  ASSERT_FALSE(matrix);
  EXPECT_EQ(matrix.error().category(), Errc::usage);
  EXPECT_NE(matrix.error().message().find("h100 and l4"), std::string::npos) << matrix.error().message();
}

TEST(CiMatrix, RefusesMoreShardsThanJobs)
{
  const auto plans = shard_plans({job("cpu", "a", Strategy::run), job("cpu", "b", Strategy::run)}, 3);
  const auto matrix = make_ci_matrix(plans);
  ASSERT_FALSE(matrix);
  EXPECT_EQ(matrix.error().category(), Errc::usage);
}

TEST(CiMatrix, FormatsParse)
{
  const auto plans = shard_plans({job("cpu", "a", Strategy::run), job("cpu", "b", Strategy::run),
                                  job("h100", "a", Strategy::skip, "h100")},
                                 3);
  const auto matrix = make_ci_matrix(plans);
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
