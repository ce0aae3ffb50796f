// SPDX-License-Identifier: Apache-2.0
// The AOT path through the builder's own pieces: the embedded target registry,
// a manifest, the plan (with this host's real ocloc), and AotExecutor::run.
#include "aot/aot_executor.hpp"

#include "base/files.hpp"
#include "level_zero/aot_programs.hpp"
#include "manifest/presets.hpp"

#include <gtest/gtest.h>

namespace prewarm::aot {
namespace {

constexpr std::string_view k_manifest = R"(version: 1
models:
  - name: qwen2.5-0.5b
    preset: qwen2.5-0.5b
precisions: [fp32]
shapes:
  batch_sizes: [1]
  prefill_lengths: [16]
  decode_steps: 2
targets: [arc-a380, arc-b580]
bundle:
  channel: default
  expires: 90d
)";

class AotExecutorTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto ocloc = Ocloc::locate();
    if (!ocloc) {
      GTEST_SKIP() << "ocloc not usable: " << ocloc.error().message();
    }
    auto registry = manifest::TargetRegistry::embedded();
    auto presets = manifest::PresetLibrary::embedded();
    ASSERT_TRUE(registry) << registry.error().message();
    ASSERT_TRUE(presets) << presets.error().message();
    m_registry.emplace(std::move(*registry));
    m_presets.emplace(std::move(*presets));
    auto parsed = manifest::parse_manifest(k_manifest, "test_only.yaml", ".", {*m_registry, *m_presets});
    ASSERT_TRUE(parsed) << parsed.error().message();
    m_manifest.emplace(std::move(*parsed));
    // This host as the build's probe sees it: no devices, the real ocloc and
    // the Intel devices it knows (asked one by one, as prewarm/bundle_build does).
    manifest::OclocInfo info;
    info.path = ocloc->executable().string();
    info.version = ocloc->driver_version();
    for (const auto& t : m_registry->targets()) {
      if (t.vendor == manifest::Vendor::intel) {
        auto d = ocloc->lookup_device(t.ocloc_device);
        if (d && d->known) {
          info.known_devices.push_back(t.ocloc_device);
        }
      }
    }
    m_host.oclocs.push_back(std::move(info));
    auto dir = TempDir::create("test_only_aotx-");
    ASSERT_TRUE(dir);
    m_dir.emplace(std::move(*dir));
  }

  std::optional<manifest::TargetRegistry> m_registry;
  std::optional<manifest::PresetLibrary> m_presets;
  std::optional<manifest::Manifest> m_manifest;
  manifest::HostCapabilities m_host;
  std::optional<TempDir> m_dir;
};

TEST_F(AotExecutorTest, PlanSkipsB580AndExecutorCompilesA380)
{
  auto plan = manifest::make_plan(*m_manifest, *m_registry, m_host);
  ASSERT_TRUE(plan) << plan.error().message();
  const manifest::Job* a380 = nullptr;
  const manifest::Job* b580 = nullptr;
  for (const auto& job : plan->jobs) {
    (job.target == "arc-a380" ? a380 : b580) = &job;
  }
  ASSERT_TRUE(a380 && b580);
  EXPECT_EQ(b580->strategy, manifest::Strategy::skip);
  EXPECT_NE(b580->reason.find("does not know 'bmg'"), std::string::npos) << b580->reason;
  ASSERT_EQ(a380->strategy, manifest::Strategy::aot) << a380->reason;

  AotExecutorOptions options;
  options.jobs = 2;
  AotExecutor executor(options);
  const auto& model = *m_manifest->find_model(a380->model);
  ASSERT_EQ(a380->executor, manifest::ExecutorKind::aot);
  EXPECT_EQ(b580->executor, manifest::ExecutorKind::none);
  const auto& target = *m_registry->find("arc-a380");
  jobs::JobContext context{*m_manifest, *a380, model, target, m_dir->path()};
  auto outcome = executor.run(context);
  ASSERT_TRUE(outcome) << outcome.error().message();
  ASSERT_EQ(outcome->outputs.size(), 1u);
  const auto& output = outcome->outputs[0];
  EXPECT_TRUE(output.staging_dir.string().starts_with(m_dir->path().string()));
  // The release as ocloc (and OpenCL) spell it, and as NEO's Level Zero
  // driver reports it (1.3.<build>).
  const auto& version = m_host.oclocs.front().version;
  std::string spellings;
  for (const auto& s : level_zero::release_spellings(version)) {
    spellings += (spellings.empty() ? "" : ",") + s;
  }
  EXPECT_TRUE(spellings.starts_with(version + ",")) << spellings;
  EXPECT_TRUE(spellings.ends_with(",1.3." + version.substr(version.rfind('.') + 1))) << spellings;
  const std::vector<bundle::Requirement> expected{
    {"intel.driver", "in", spellings}, {"pci-id", "in", "0x56a5"}, {"vendor", "==", "intel"}};
  EXPECT_EQ(output.requirements, expected);
  EXPECT_GT(outcome->variants, 0u);
  EXPECT_NE(outcome->report_json.find("\"ocloc_device\":\"acm-g11\""), std::string::npos) << outcome->report_json;

  auto programs = level_zero::AotPrograms::open(output.staging_dir / "programs");
  ASSERT_TRUE(programs) << programs.error().message();
  ASSERT_EQ(programs->targets().size(), 1u);
  DeviceProperties a380_host{{"vendor", "intel"}, {"pci-id", "0x56a5"}, {"intel.driver", m_host.oclocs.front().version}};
  EXPECT_NE(programs->select(a380_host).target, nullptr);
}

TEST_F(AotExecutorTest, RequirementsListEveryPciIdSorted)
{
  const AotTargetSpec spec{"iris-xe", "tgllp", "12.0.0", {"0x9a49", "0x9a40"}};
  auto r = aot_requirements(spec, "22.43.24595");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[1].key, "pci-id");
  EXPECT_EQ(r[1].op, "in");
  EXPECT_EQ(r[1].value, "0x9a40,0x9a49");
}

} // namespace
} // namespace prewarm::aot
