// SPDX-License-Identifier: Apache-2.0
#include "command/command_executor.hpp"

#include "base/files.hpp"
#include "manifest/manifest.hpp"
#include "manifest/plan.hpp"
#include "manifest/presets.hpp"
#include "manifest/target_registry.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace prewarm::command {
namespace {

namespace fs = std::filesystem;

struct Fixture
{
  manifest::TargetRegistry registry;
  manifest::PresetLibrary presets;
};

Fixture
load_fixture()
{
  auto registry = manifest::TargetRegistry::embedded();
  EXPECT_TRUE(registry) << registry.error().message();
  auto presets = manifest::PresetLibrary::embedded();
  EXPECT_TRUE(presets) << presets.error().message();
  return Fixture{std::move(*registry), std::move(*presets)};
}

TEST(CommandExecutor, ExampleManifestsParseAsCommandWorkloads)
{
  auto fixture = load_fixture();
  for (const auto* name : {"pyopencl.yaml", "torch.yaml"}) {
    const auto path = fs::path(PREWARM_SOURCE_DIR) / "manifests" / "examples" / name;
    auto parsed = manifest::load_manifest_file(path, {fixture.registry, fixture.presets});
    ASSERT_TRUE(parsed) << parsed.error().message();
    ASSERT_EQ(parsed->models.size(), 1u);
    const auto& model = parsed->models[0];
    ASSERT_TRUE(model.command.has_value());
    auto workload = to_command_workload(*model.command);
    ASSERT_TRUE(workload) << workload.error().message();
    EXPECT_FALSE(workload->kinds.empty());
    // The script named in argv exists next to the manifest.
    EXPECT_TRUE(fs::exists(model.command->cwd / workload->argv[1])) << model.command->cwd / workload->argv[1];
  }
}

// A custom cache whose variable the runtime does not export on its own: the
// build says so and names the policy key; vetted names are not mentioned.
TEST(CommandExecutor, VariablesTheRuntimeExportsOnlyUnderAPolicyAreNamed)
{
  manifest::CommandWorkload m;
  m.caches = {{"jax", "JAX_COMPILATION_CACHE_DIR", {}, {}}, {"mine", "MY_APP_KERNEL_CACHE", {}, {}}};
  m.runtime_env = {{"PYOPENCL_NO_CACHE", "1"}, {"MY_APP_MODE", "fast"}};
  const auto warnings = unexported_variables(m);
  ASSERT_EQ(warnings.size(), 2u) << (warnings.empty() ? "" : warnings.front());
  EXPECT_NE(warnings[0].find("custom cache mine:"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("install: {environment: [MY_APP_KERNEL_CACHE]}"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("$MY_APP_MODE"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[1].find("install.environment"), std::string::npos) << warnings[1];
}

TEST(CommandExecutor, ShellWorkloadsAreJoinedIntoOneString)
{
  manifest::CommandWorkload m;
  m.argv = {"echo", "a", "|", "tr", "a", "b"};
  m.shell = manifest::ShellMode::shell;
  m.kinds = {CacheKind::pocl, CacheKind::triton};
  auto w = to_command_workload(m);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->argv, std::vector<std::string>{"echo a | tr a b"});
  EXPECT_EQ(w->shell, ShellMode::via_shell);
  EXPECT_EQ(w->kinds, (std::vector<CacheKind>{CacheKind::pocl, CacheKind::triton}));
}

TEST(CommandExecutor, RunsTheJobAndGroupsOutputsByRequirements)
{
  auto fixture = load_fixture();
  auto dir = TempDir::create("test_only_executor-");
  ASSERT_TRUE(dir);
  manifest::Manifest m;
  manifest::ModelSpec model;
  model.name = "test_only_model";
  model.source = manifest::ModelSource::command;
  model.command = manifest::CommandWorkload{};
  model.command->argv = {"sh", "-c",
                         "for d in \"$POCL_CACHE_DIR\" \"$CUDA_CACHE_PATH\"; do mkdir -p \"$d/x\"; "
                         "echo \"$PREWARM_TARGET $PREWARM_PRECISION\" > \"$d/x/entry\"; done"};
  model.command->kinds = {CacheKind::pocl, CacheKind::cuda};
  m.models.push_back(model);
  manifest::Job job;
  job.id = "cpu/test_only_model/fp16";
  job.target = "cpu";
  job.model = "test_only_model";
  job.precision = model::Precision::fp16;
  job.strategy = manifest::Strategy::run;
  job.device = manifest::HostDevice{0, "0: test_only cpu",
                                    {{"vendor", "cpu"},
                                     {"opencl.platform", "Portable Computing Language"},
                                     {"opencl.platform-version", "OpenCL 3.0 PoCL test_only"},
                                     {"opencl.device", "test_only-cpu"},
                                     {"opencl.driver", "3.1"}},
                                    false};
  const auto* target = fixture.registry.find("cpu");
  ASSERT_NE(target, nullptr);

  CommandExecutorOptions options;
  options.list_nvidia_gpus = [] {
    return std::vector<DeviceProperties>{{{"vendor", "nvidia"}, {"nvidia.driver", "580.1.2"}, {"nvidia.sm", "90"}}};
  };
  CommandExecutor executor(options);

  const jobs::JobContext context{m, job, m.models[0], *target, dir->path()};
  auto outcome = executor.run(context);
  ASSERT_TRUE(outcome) << outcome.error().message();
  ASSERT_EQ(outcome->outputs.size(), 2u);
  for (const auto& output : outcome->outputs) {
    EXPECT_TRUE(output.staging_dir.string().starts_with(dir->path().string()));
    const bool is_cuda = fs::exists(output.staging_dir / "cuda");
    // Each output holds only its own kinds.
    EXPECT_NE(is_cuda, fs::exists(output.staging_dir / "pocl"));
    const auto entry = output.staging_dir / (is_cuda ? "cuda" : "pocl") / "x" / "entry";
    EXPECT_EQ(*read_file(entry), "cpu fp16\n");
    if (is_cuda) {
      EXPECT_EQ(output.requirements,
                (std::vector<bundle::Requirement>{{"nvidia.driver", "==", "580.1.2"}, {"nvidia.sm", "==", "90"}}));
    } else {
      EXPECT_EQ(output.requirements.size(), 4u); // vendor, platform version, device, driver
      EXPECT_EQ(output.requirements[0].key, "opencl.device");
    }
  }
  EXPECT_EQ(outcome->device, "0: test_only cpu");
  EXPECT_EQ(outcome->job_line.rfind("command cpu/test_only_model/fp16: sh -c 'for d in", 0), 0u);
  EXPECT_NE(outcome->summary.find("pocl 1 files"), std::string::npos);
  const auto report = nlohmann::json::parse(outcome->report_json);
  EXPECT_EQ(report["succeeded"], true);
  EXPECT_EQ(report["kinds"].size(), 2u);
}

TEST(CommandExecutor, AFailedCommandIsAFailedJobWithItsOutput)
{
  auto fixture = load_fixture();
  auto dir = TempDir::create("test_only_executor-");
  ASSERT_TRUE(dir);
  manifest::Manifest m;
  manifest::ModelSpec model;
  model.name = "bad";
  model.source = manifest::ModelSource::command;
  model.command = manifest::CommandWorkload{};
  model.command->argv = {"sh", "-c", "echo test_only_boom >&2; exit 9"};
  model.command->kinds = {CacheKind::pocl};
  m.models.push_back(model);
  manifest::Job job;
  job.id = "cpu/bad/fp32";
  job.target = "cpu";
  job.model = "bad";
  job.strategy = manifest::Strategy::run;
  CommandExecutor executor;
  const jobs::JobContext context{m, job, m.models[0], *fixture.registry.find("cpu"), dir->path()};
  auto outcome = executor.run(context);
  ASSERT_FALSE(outcome);
  EXPECT_NE(outcome.error().message().find("exited with status 9"), std::string::npos);
  EXPECT_NE(outcome.error().message().find("test_only_boom"), std::string::npos);
}

} // namespace
} // namespace prewarm::command
