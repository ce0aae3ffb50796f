// SPDX-License-Identifier: Apache-2.0
// The recording run of a command workload's AOT job gets the environment the
// command executor gives the same workload: PREWARM_PRECISION only for a job
// with a precision axis (its command names "{precision}").
#include "aot/recorded_aot_executor.hpp"

#include "base/files.hpp"
#include "manifest/manifest.hpp"
#include "manifest/plan.hpp"
#include "manifest/target_registry.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace prewarm::aot {
namespace {

namespace fs = std::filesystem;

// Runs the recording of one job whose command writes what it was given into
// `seen` (the recording's own directories are the executor's scratch).
std::string
recorded_environment(RecordedAotExecutor& executor, const manifest::Job& job, const fs::path& seen)
{
  auto registry = manifest::TargetRegistry::embedded();
  EXPECT_TRUE(registry) << registry.error().message();
  const auto* target = registry->find(job.target);
  EXPECT_NE(target, nullptr);
  manifest::Manifest m;
  manifest::ModelSpec model;
  model.name = "test_only_recorded";
  model.source = manifest::ModelSource::command;
  model.command = manifest::CommandWorkload{};
  model.command->argv = {"sh", "-c",
                         "echo \"${PREWARM_TARGET} ${PREWARM_PRECISION-unset}\" > \"" + seen.string() + "\""};
  model.command->kinds = {bundle::CacheKind::programs};
  m.models.push_back(model);
  auto work = TempDir::create("test_only_recorded_work-");
  EXPECT_TRUE(work);
  const jobs::JobContext context{m, job, m.models[0], *target, work->path()};
  auto store = executor.recorded_program_store(context);
  EXPECT_TRUE(store) << store.error().message();
  auto text = read_file(seen);
  EXPECT_TRUE(text) << text.error().message();
  return text ? *text : std::string();
}

manifest::Job
aot_job(std::string id, bool has_precision)
{
  manifest::Job job;
  job.id = std::move(id);
  job.target = "arc-b580";
  job.model = "test_only_recorded";
  job.precision = model::Precision::fp16;
  job.has_precision = has_precision;
  job.strategy = manifest::Strategy::aot;
  return job;
}

TEST(RecordedAotExecutor, RecordingRunGetsPrecisionOnlyWhereTheJobHasOne)
{
  auto dir = TempDir::create("test_only_recorded-");
  ASSERT_TRUE(dir);
  RecordedAotExecutor executor(RecordedAotOptions{});
  EXPECT_EQ(recorded_environment(executor, aot_job("arc-b580/test_only_recorded", false), dir->path() / "none"),
            "arc-b580 unset\n");
  // Another recording (keyed by precision), not the one above reused.
  EXPECT_EQ(recorded_environment(executor, aot_job("arc-b580/test_only_recorded/fp16", true), dir->path() / "fp16"),
            "arc-b580 fp16\n");
}

} // namespace
} // namespace prewarm::aot
