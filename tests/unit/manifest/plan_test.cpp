// SPDX-License-Identifier: Apache-2.0
#include "test_inputs.hpp"

#include "manifest/plan.hpp"
#include "manifest/shard_partition.hpp"

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace prewarm::manifest {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

HostDevice
pocl_device()
{
  return HostDevice{0, "0: pthread-cpu (Portable Computing Language)",
                    {{"vendor", "cpu"}, {"opencl.device", "pthread-cpu"}, {"opencl.driver", "3.1"}}, false};
}

HostDevice
nvidia_device(int index, std::string sm, std::string pci)
{
  DeviceProperties props{{"vendor", "nvidia"}, {"nvidia.sm", std::move(sm)}, {"opencl.device", "NVIDIA X"}};
  if (!pci.empty()) {
    props["pci-id"] = pci;
  }
  return HostDevice{index, fmt::format("{}: NVIDIA X", index), props, true};
}

OclocInfo
ocloc_22_43()
{
  return OclocInfo{"/usr/bin/ocloc", "22.43.24595", {"acm-g10", "acm-g11", "dg1", "tgllp", "pvc"}};
}

// What the Intel root's ocloc answers for the registry's devices (the
// integration test intel_root_test.sh asks the real one).
OclocInfo
ocloc_26_27()
{
  return OclocInfo{"/var/cache/prewarm/intel-sid/host-bin/ocloc",
                   "26.27.039122",
                   {"acm-g10", "acm-g11", "dg1", "tgllp", "pvc", "mtl-h", "mtl-u", "bmg", "arl-h", "lnl-m", "ptl-h",
                    "ptl-u"},
                   "Intel root /var/cache/prewarm/intel-sid",
                   OclocSource::intel_root};
}

Manifest
manifest_for(const std::string& targets, const std::string& precisions = "[fp32]", bool with_command = false)
{
  std::string text = "version: 1\nmodels:\n  - name: qwen\n    preset: qwen2.5-0.5b\n";
  if (with_command) {
    text += "  - name: script\n    command: {argv: [python3, w.py]}\n";
  }
  text += "precisions: " + precisions + "\ntargets: " + targets + "\n";
  auto m = testing::parse(text);
  EXPECT_TRUE(m) << m.error().message();
  return std::move(*m);
}

const Target&
target(const std::string& name)
{
  const auto* t = testing::registry().find(name);
  EXPECT_NE(t, nullptr) << name;
  return *t;
}

TEST(PlanStrategy, CpuRunsOnAnOpenClCpuDevice)
{
  HostCapabilities host;
  host.devices.push_back(pocl_device());
  const auto a = assess_target(target("cpu"), host);
  EXPECT_EQ(a.strategy, Strategy::run);
  ASSERT_TRUE(a.device);
  EXPECT_EQ(a.device->index, 0);

  HostCapabilities none;
  none.devices_error = "no OpenCL platform";
  const auto b = assess_target(target("cpu"), none);
  EXPECT_EQ(b.strategy, Strategy::skip);
  EXPECT_THAT(b.reason, HasSubstr("cpu: no OpenCL CPU device on this host (install pocl-opencl-icd); OpenCL: no OpenCL platform"));
}

TEST(PlanStrategy, NvidiaNeedsTheDeviceWithTheRightSmAndId)
{
  HostCapabilities host;
  host.devices.push_back(pocl_device());
  EXPECT_EQ(assess_target(target("h100"), host).reason,
            "h100: no NVIDIA device on this host (NVIDIA caches can only be made on the device)");

  host.devices.push_back(nvidia_device(1, "90", "0x2335")); // an H200
  const auto h200 = assess_target(target("h200"), host);
  EXPECT_EQ(h200.strategy, Strategy::run);
  EXPECT_EQ(h200.device->index, 1);
  const auto h100 = assess_target(target("h100"), host);
  EXPECT_EQ(h100.strategy, Strategy::skip); // same SM, different GPU
  EXPECT_THAT(h100.reason, HasSubstr("is not h100 (sm 90"));
  const auto a100 = assess_target(target("a100"), host);
  EXPECT_EQ(a100.strategy, Strategy::skip);
  EXPECT_THAT(a100.reason, HasSubstr("(sm 90, pci 0x2335) is not a100 (sm 80"));

  HostCapabilities no_pci;
  no_pci.devices.push_back(nvidia_device(0, "90", ""));
  const auto unknown = assess_target(target("h100"), no_pci); // the SM alone cannot tell an H100 from an H200
  EXPECT_EQ(unknown.strategy, Strategy::skip);
  EXPECT_THAT(unknown.reason, HasSubstr("reports no PCI device id"));
}

TEST(PlanStrategy, IntelRunsWhenPresentCompilesAheadWhenOclocKnowsElseSkips)
{
  HostCapabilities host;
  host.oclocs = {ocloc_22_43()};
  const auto a380 = assess_target(target("arc-a380"), host);
  EXPECT_EQ(a380.strategy, Strategy::aot);
  EXPECT_EQ(a380.reason, "ocloc 22.43.24595 (host) -device acm-g11 (IP 12.56.5)");

  const auto b580 = assess_target(target("arc-b580"), host);
  EXPECT_EQ(b580.strategy, Strategy::skip);
  EXPECT_EQ(b580.reason,
            "arc-b580: ocloc 22.43.24595 (host) does not know 'bmg' (run ./setup.sh intel-root for the compute "
            "runtime 26.27 toolchain, or install a newer intel-opencl-icd / ocloc)");
  EXPECT_EQ(assess_target(target("mtl-igpu"), host).strategy, Strategy::skip);

  host.devices.push_back(HostDevice{0, "0: Intel(R) Arc(TM) A380", {{"vendor", "intel"}, {"pci-id", "0x56a5"}}, true});
  EXPECT_EQ(assess_target(target("arc-a380"), host).strategy, Strategy::run);
  EXPECT_EQ(assess_target(target("arc-a770"), host).strategy, Strategy::aot); // present GPU is another model

  HostCapabilities no_ocloc;
  EXPECT_THAT(assess_target(target("arc-a770"), no_ocloc).reason, HasSubstr("no ocloc found"));
}

// The Intel targets a Debian 12 host's ocloc (22.43) cannot build for, and
// that the Intel root's (26.27) can.
const std::set<std::string> k_needs_26_27{"arc-b580", "mtl-igpu", "mtl-u-igpu", "arl-h-igpu",
                                          "lnl-igpu", "ptl-h-igpu", "ptl-u-igpu"};

TEST(PlanStrategy, EveryIntelTargetWithTheHostToolchainAloneTheIntelRootAloneAndBoth)
{
  HostCapabilities host_only;
  host_only.oclocs = {ocloc_22_43()};
  HostCapabilities root_only;
  root_only.oclocs = {ocloc_26_27()};
  HostCapabilities both;
  both.oclocs = {ocloc_22_43(), ocloc_26_27()};
  int intel = 0;
  for (const auto& t : testing::registry().targets()) {
    if (t.vendor != Vendor::intel) {
      continue;
    }
    ++intel;
    const bool new_device = k_needs_26_27.contains(t.name);
    const auto host = assess_target(t, host_only);
    EXPECT_EQ(host.strategy, new_device ? Strategy::skip : Strategy::aot) << t.name << ": " << host.reason;
    if (new_device) {
      EXPECT_EQ(host.reason, fmt::format("{}: ocloc 22.43.24595 (host) does not know '{}' (run ./setup.sh intel-root "
                                         "for the compute runtime 26.27 toolchain, or install a newer "
                                         "intel-opencl-icd / ocloc)",
                                         t.name, t.ocloc_device));
    }

    const auto root = assess_target(t, root_only);
    EXPECT_EQ(root.strategy, Strategy::aot) << t.name << ": " << root.reason;
    EXPECT_THAT(root.reason, HasSubstr("ocloc 26.27.039122 (Intel root /var/cache/prewarm/intel-sid) -device " +
                                       t.ocloc_device));

    // Both: the host's serves what it knows; the root the rest, saying why.
    const auto a = assess_target(t, both);
    EXPECT_EQ(a.strategy, Strategy::aot) << t.name << ": " << a.reason;
    if (new_device) {
      EXPECT_EQ(a.reason, fmt::format("ocloc 26.27.039122 (Intel root /var/cache/prewarm/intel-sid) -device {} (IP {}): "
                                      "ocloc 22.43.24595 (host) does not know '{}'",
                                      t.ocloc_device, t.ip_version, t.ocloc_device));
      EXPECT_EQ(both.ocloc_for(t.ocloc_device)->origin, "Intel root /var/cache/prewarm/intel-sid");
    } else {
      EXPECT_THAT(a.reason, ::testing::StartsWith("ocloc 22.43.24595 (host) -device " + t.ocloc_device));
      EXPECT_EQ(both.ocloc_for(t.ocloc_device)->origin, "host");
    }
    // Wherever a toolchain knows the device, any CPU runner compiles it.
    const auto builtin = manifest_for("[cpu]").models.at(0);
    EXPECT_EQ(runner_kind(t, builtin, std::span<const OclocInfo>(both.oclocs)), "cpu") << t.name;
    EXPECT_EQ(runner_kind(t, builtin, std::span<const OclocInfo>(host_only.oclocs)), new_device ? t.name : "cpu")
      << t.name;
  }
  EXPECT_GE(intel, 16);
  // Every Intel target the issue names is in the registry.
  for (const auto& name : k_needs_26_27) {
    EXPECT_NE(testing::registry().find(name), nullptr) << name;
  }
}

TEST(PlanStrategy, ADeviceNoToolchainKnowsNamesEveryToolchainTried)
{
  auto future = target("arc-b580");
  future.ocloc_device = "nvl-s";
  HostCapabilities both;
  both.oclocs = {ocloc_22_43(), ocloc_26_27()};
  const auto a = assess_target(future, both);
  EXPECT_EQ(a.strategy, Strategy::skip);
  EXPECT_THAT(a.reason, HasSubstr("arc-b580: ocloc 22.43.24595 (host) and ocloc 26.27.039122 (Intel root "
                                  "/var/cache/prewarm/intel-sid) do not know 'nvl-s'"));
}

TEST(Plan, JobsAreTargetTimesModelTimesPrecisionSortedById)
{
  HostCapabilities host;
  host.devices.push_back(pocl_device());
  host.oclocs = {ocloc_22_43()};
  const auto m = manifest_for("[arc-b580, cpu, arc-a380]", "[int8, fp32]", true);
  auto plan = make_plan(m, testing::registry(), host);
  ASSERT_TRUE(plan) << plan.error().message();
  // The command names no {precision}: one job per target, not per precision.
  EXPECT_EQ(plan->total_jobs, 3u * 2u + 3u);
  ASSERT_EQ(plan->jobs.size(), plan->total_jobs);
  std::vector<std::string> ids;
  for (const auto& job : plan->jobs) {
    ids.push_back(job.id);
  }
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(ids.front(), "arc-a380/qwen/fp32");

  std::map<std::string, const Job*> by_id;
  for (const auto& job : plan->jobs) {
    by_id[job.id] = &job;
  }
  EXPECT_EQ(by_id.at("cpu/qwen/int8")->strategy, Strategy::run);
  EXPECT_EQ(by_id.at("cpu/script")->strategy, Strategy::run);
  EXPECT_FALSE(by_id.at("cpu/script")->has_precision);
  EXPECT_TRUE(by_id.at("cpu/qwen/int8")->has_precision);
  EXPECT_EQ(by_id.at("arc-a380/qwen/fp32")->strategy, Strategy::aot);
  EXPECT_EQ(by_id.at("arc-a380/script")->strategy, Strategy::skip); // commands cannot compile ahead
  EXPECT_THAT(by_id.at("arc-a380/script")->reason, HasSubstr("command workload runs only on the device"));
  EXPECT_EQ(by_id.at("arc-b580/qwen/fp32")->strategy, Strategy::skip);
  // The strategy and the workload name the executor; nothing after the plan chooses.
  EXPECT_EQ(by_id.at("cpu/qwen/int8")->executor, ExecutorKind::builtin);
  EXPECT_EQ(by_id.at("cpu/script")->executor, ExecutorKind::command);
  EXPECT_EQ(by_id.at("arc-a380/qwen/fp32")->executor, ExecutorKind::aot);
  EXPECT_EQ(by_id.at("arc-a380/script")->executor, ExecutorKind::none);
  EXPECT_EQ(by_id.at("arc-b580/qwen/fp32")->executor, ExecutorKind::none);
  EXPECT_EQ(plan->count(Strategy::run), 3u);
  EXPECT_EQ(plan->count(Strategy::aot), 2u);
  EXPECT_EQ(plan->count(Strategy::skip), 4u);
}

TEST(Plan, ACommandHasAPrecisionAxisOnlyWhereItNamesPrecision)
{
  HostCapabilities host;
  host.devices.push_back(pocl_device());
  const auto plan_of = [&](const std::string& command) {
    auto m = testing::parse("version: 1\nmodels:\n  - name: app\n    command: " + command +
                            "\nprecisions: [fp16, fp32, int8]\ntargets: [cpu]\n");
    EXPECT_TRUE(m) << m.error().message();
    auto plan = make_plan(*m, testing::registry(), host);
    EXPECT_TRUE(plan) << plan.error().message();
    std::vector<std::string> ids;
    for (const auto& job : plan->jobs) {
      ids.push_back(job.id);
    }
    return ids;
  };
  EXPECT_EQ(plan_of("{argv: [./app]}"), (std::vector<std::string>{"cpu/app"}));
  EXPECT_EQ(plan_of("{argv: [./app, \"--dtype={precision}\"]}"),
            (std::vector<std::string>{"cpu/app/fp16", "cpu/app/fp32", "cpu/app/int8"}));
  EXPECT_EQ(plan_of("{argv: [./app], env: {DTYPE: \"{precision}\"}}").size(), 3u);
  EXPECT_EQ(plan_of("{argv: [./app], cwd: \"runs/{precision}\"}").size(), 3u);
}

TEST(Plan, ACommandNamingProgramsIsCompiledAheadOfTimeForAnAbsentIntelTarget)
{
  HostCapabilities host;
  host.devices.push_back(pocl_device());
  host.oclocs = {ocloc_22_43()};
  const auto text = [](const std::string& kinds) {
    return "version: 1\nmodels:\n  - name: app\n    command: {argv: [./app], kinds: " + kinds +
           "}\nprecisions: [fp32]\ntargets: [arc-a380, arc-b580]\n";
  };
  auto named = testing::parse(text("[programs]"));
  ASSERT_TRUE(named) << named.error().message();
  auto plan = make_plan(*named, testing::registry(), host);
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_EQ(plan->jobs.size(), 2u);
  EXPECT_EQ(plan->jobs[0].id, "arc-a380/app");
  EXPECT_EQ(plan->jobs[0].strategy, Strategy::aot);
  EXPECT_THAT(plan->jobs[0].reason, HasSubstr("for the programs the command builds"));
  EXPECT_EQ(plan->jobs[0].executor, ExecutorKind::recorded_aot);
  EXPECT_EQ(plan->jobs[1].strategy, Strategy::skip); // ocloc does not know bmg: still a skip
  EXPECT_THAT(plan->jobs[1].reason, HasSubstr("does not know 'bmg'"));

  auto other = testing::parse(text("[pocl]"));
  ASSERT_TRUE(other) << other.error().message();
  auto skipped = make_plan(*other, testing::registry(), host);
  ASSERT_TRUE(skipped) << skipped.error().message();
  EXPECT_EQ(skipped->jobs[0].strategy, Strategy::skip);
  EXPECT_EQ(skipped->jobs[0].executor, ExecutorKind::none);
  EXPECT_THAT(skipped->jobs[0].reason, HasSubstr("when its kinds include programs"));
}

TEST(Plan, ACommandNamingNeoOrSyclRunsOnAVirtualDeviceOnlyWithAnIntelRoot)
{
  HostCapabilities host;
  host.devices.push_back(pocl_device());
  host.oclocs = {ocloc_22_43()};
  const auto text = [](const std::string& kinds) {
    return "version: 1\nmodels:\n  - name: app\n    command: {argv: [./app], kinds: " + kinds +
           "}\nprecisions: [fp32]\ntargets: [arc-a380]\n";
  };
  auto sycl = testing::parse(text("[neo, sycl]"));
  ASSERT_TRUE(sycl) << sycl.error().message();
  EXPECT_TRUE(runs_on_virtual_device(sycl->models.front()));
  auto without_root = make_plan(*sycl, testing::registry(), host);
  ASSERT_TRUE(without_root) << without_root.error().message();
  EXPECT_EQ(without_root->jobs[0].strategy, Strategy::skip); // no driver that can pose as the target
  EXPECT_EQ(without_root->jobs[0].executor, ExecutorKind::none);
  EXPECT_THAT(without_root->jobs[0].reason, HasSubstr("name neo or sycl runs on a virtual device"));
  EXPECT_EQ(without_root->jobs[0].runner, "arc-a380"); // only a runner with the card could

  auto root = ocloc_22_43();
  root.origin = "Intel root /var/cache/prewarm/intel-sid";
  root.source = OclocSource::intel_root;
  host.oclocs.push_back(root);
  auto with_root = make_plan(*sycl, testing::registry(), host);
  ASSERT_TRUE(with_root) << with_root.error().message();
  EXPECT_EQ(with_root->jobs[0].strategy, Strategy::aot);
  EXPECT_EQ(with_root->jobs[0].executor, ExecutorKind::virtual_command);
  EXPECT_THAT(with_root->jobs[0].reason, HasSubstr("the command runs on a virtual acm-g11 (Intel root"));
  // So a CI runner of the builder image with the Intel root does it: no
  // self-hosted runner with the card.
  EXPECT_EQ(with_root->jobs[0].runner, "cpu");

  // programs keeps the recording executors; other kinds alone keep the skip.
  auto both = testing::parse(text("[programs, neo]"));
  ASSERT_TRUE(both) << both.error().message();
  EXPECT_FALSE(runs_on_virtual_device(both->models.front()));
  auto other = testing::parse(text("[pocl]"));
  ASSERT_TRUE(other) << other.error().message();
  EXPECT_FALSE(runs_on_virtual_device(other->models.front()));
}

TEST(Plan, AVirtualDeviceJobNamesTheMissingHelperAndKeepsItsRunner)
{
  HostCapabilities host;
  host.devices.push_back(pocl_device());
  auto root = ocloc_22_43();
  root.origin = "Intel root /var/cache/prewarm/intel-sid";
  root.source = OclocSource::intel_root;
  host.oclocs = {root};
  const std::string missing = "prewarm-cl-replay not found (looked for /opt/x/prewarm-cl-replay and "
                              "/opt/virtual_device/prewarm-cl-replay, PREWARM_CL_REPLAY unset; ...)";
  host.virtual_device_missing = {missing};
  auto manifest = testing::parse("version: 1\nmodels:\n  - name: app\n    command: {argv: [./app], kinds: [neo]}\n"
                                 "  - name: gptq-linear\n    preset: gptq-linear\nprecisions: [fp32]\n"
                                 "targets: [arc-a380, cpu]\n");
  ASSERT_TRUE(manifest) << manifest.error().message();
  auto plan = make_plan(*manifest, testing::registry(), host);
  ASSERT_TRUE(plan) << plan.error().message();
  const auto job = [&](std::string_view id) {
    return *std::ranges::find_if(plan->jobs, [&](const Job& j) { return j.id == id; });
  };
  // The build could not run the command: skipped, saying what and where.
  EXPECT_EQ(job("arc-a380/app").strategy, Strategy::skip);
  EXPECT_EQ(job("arc-a380/app").executor, ExecutorKind::none);
  EXPECT_THAT(job("arc-a380/app").reason, HasSubstr("runs on a virtual acm-g11"));
  EXPECT_THAT(job("arc-a380/app").reason, HasSubstr(missing));
  // The shard partition does not depend on where prewarm was copied to.
  EXPECT_EQ(job("arc-a380/app").runner, "cpu");
  // The built-in job still compiles ahead of time, without its NEO slice.
  EXPECT_EQ(job("arc-a380/gptq-linear/fp32").strategy, Strategy::aot);
  EXPECT_THAT(job("arc-a380/gptq-linear/fp32").reason, HasSubstr("without its NEO slice: " + missing));
  // No virtual device on a CPU target: nothing named.
  EXPECT_THAT(job("cpu/gptq-linear/fp32").reason, Not(HasSubstr("prewarm-cl-replay")));

  host.virtual_device_missing.clear();
  auto found = make_plan(*manifest, testing::registry(), host);
  ASSERT_TRUE(found) << found.error().message();
  for (const auto& j : found->jobs) {
    EXPECT_THAT(j.reason, Not(HasSubstr("prewarm-cl-replay"))) << j.id;
  }
  EXPECT_EQ(found->jobs[0].executor, ExecutorKind::virtual_command);

  // Without the root's toolchain (PREWARM_OCLOC) the command is skipped for
  // that reason; the built-in job, whose NEO slice the root still makes,
  // names the helper.
  host.virtual_device_missing = {missing};
  host.oclocs = {ocloc_22_43()};
  auto no_root = make_plan(*manifest, testing::registry(), host);
  ASSERT_TRUE(no_root) << no_root.error().message();
  EXPECT_THAT(no_root->jobs[0].reason, HasSubstr("name neo or sycl runs on a virtual device"));
  EXPECT_THAT(no_root->jobs[0].reason, Not(HasSubstr("prewarm-cl-replay")));
  EXPECT_THAT(no_root->jobs[1].reason, HasSubstr("without its NEO slice: " + missing));
}

TEST(Shard, ParseAcceptsOnlyIOverN)
{
  EXPECT_EQ(Shard::parse("2/4")->index, 2);
  EXPECT_EQ(Shard::parse("2/4")->count, 4);
  EXPECT_EQ(Shard::parse("1/1")->count, 1);
  for (const char* bad : {"0/4", "5/4", "4", "a/b", "1/0", "1/4x", "/4", "-1/4", ""}) {
    auto s = Shard::parse(bad);
    EXPECT_FALSE(s) << bad;
    if (!s) {
      EXPECT_EQ(s.error().category(), Errc::usage);
    }
  }
}

TEST(Shard, ShardsPartitionTheJobsDisjointlyAndCompletely)
{
  HostCapabilities host;
  host.devices.push_back(pocl_device());
  host.oclocs = {ocloc_22_43()};
  const auto m = manifest_for("[cpu, arc-a380, arc-a770, dg1, h100]", "[fp32, fp16, int8]", true);
  auto all = make_plan(m, testing::registry(), host);
  ASSERT_TRUE(all);
  std::set<std::string> everything;
  for (const auto& job : all->jobs) {
    everything.insert(job.id);
  }
  ASSERT_EQ(everything.size(), 5u * (3u + 1u)); // qwen per precision; the command names no {precision}
  // The command workload runs on the device itself, so arc-a380, arc-a770,
  // dg1 and h100 each need their own runner: 2 or 3 shards cannot keep every
  // shard on one runner.
  for (int n : {2, 3}) {
    auto refused = make_plan(m, testing::registry(), host, Shard{1, n});
    ASSERT_FALSE(refused) << n;
    EXPECT_EQ(refused.error().category(), Errc::usage);
    EXPECT_NE(refused.error().message().find("4 different GPU runners"), std::string::npos)
      << refused.error().message();
  }
  for (int n : {1, 4, 7, 30, 31}) {
    std::set<std::string> seen;
    std::size_t sum = 0;
    for (int i = 1; i <= n; ++i) {
      auto part = make_plan(m, testing::registry(), host, Shard{i, n});
      ASSERT_TRUE(part) << part.error().message();
      EXPECT_EQ(part->total_jobs, everything.size());
      sum += part->jobs.size();
      std::set<std::string> gpu_runners;
      for (const auto& job : part->jobs) {
        EXPECT_TRUE(seen.insert(job.id).second) << job.id << " in two shards of " << n;
        if (job.runner != "cpu") {
          gpu_runners.insert(job.runner);
        }
      }
      if (n >= 2) {
        // One runner per shard: never two GPU kinds (cpu jobs, which any
        // runner can do, may join a GPU shard when N leaves them none).
        EXPECT_LE(gpu_runners.size(), 1u) << "shard " << i << "/" << n;
      }
      if (static_cast<std::size_t>(n) <= everything.size()) {
        EXPECT_FALSE(part->jobs.empty()) << "shard " << i << "/" << n;
      }
    }
    EXPECT_EQ(sum, everything.size()) << n;
    EXPECT_EQ(seen, everything) << n;
  }
}

TEST(Shard, PartitionDoesNotDependOnManifestOrderOrHost)
{
  HostCapabilities here;
  here.devices.push_back(pocl_device());
  HostCapabilities gpu_runner; // another CI runner: different strategies, same partition
  gpu_runner.devices.push_back(nvidia_device(0, "90", "0x2330"));
  const auto a = manifest_for("[cpu, h100, arc-a770]", "[fp32, fp16]");
  const auto b = manifest_for("[arc-a770, h100, cpu]", "[fp16, fp32]");
  for (int i = 1; i <= 3; ++i) {
    auto pa = make_plan(a, testing::registry(), here, Shard{i, 3});
    auto pb = make_plan(b, testing::registry(), gpu_runner, Shard{i, 3});
    ASSERT_TRUE(pa && pb);
    ASSERT_EQ(pa->jobs.size(), pb->jobs.size());
    for (std::size_t j = 0; j < pa->jobs.size(); ++j) {
      EXPECT_EQ(pa->jobs[j].id, pb->jobs[j].id);
    }
  }
}

} // namespace
} // namespace prewarm::manifest
