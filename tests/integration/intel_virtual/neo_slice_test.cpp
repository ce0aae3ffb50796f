// SPDX-License-Identifier: Apache-2.0
// The NEO slice of the virtual-device executor for targets whose AOT half
// needs a newer ocloc than the build host's (arc-b580 = bmg, mtl-u-igpu =
// mtl-u): NEO 26.27 of the Intel root poses as each and builds the built-in
// workload's programs; the slice holds NEO entries only, its requirements are
// NEO's traced key inputs, and a second virtual run (a new process, a copy of
// the slice) reuses every entry and writes none. Skips without the root.
#include "aot/kernel_variants.hpp"
#include "base/files.hpp"
#include "host/intel_compiler_identity.hpp"
#include "jobs/slice_identity.hpp"
#include "manifest/intel_profile.hpp"
#include "manifest/manifest.hpp"
#include "manifest/presets.hpp"
#include "manifest/target_registry.hpp"
#include "virtual_device/intel_root.hpp"
#include "virtual_device/virtual_command.hpp"
#include "virtual_device/virtual_device.hpp"
#include "virtual_device/virtual_device_executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace prewarm;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_manifest = R"(version: 1
models:
  - name: gptq-linear
    preset: gptq-linear
precisions: [fp32]
shapes:
  batch_sizes: [1]
  prefill_lengths: [16]
  decode_steps: 2
targets: [arc-b580, mtl-u-igpu]
bundle:
  channel: default
  expires: 90d
)";

std::string
requirement(const jobs::JobOutput& output, std::string_view key)
{
  for (const auto& r : output.requirements) {
    if (r.key == key) {
      return r.op + " " + r.value;
    }
  }
  return "(none)";
}

class NeoSlice : public ::testing::TestWithParam<std::pair<const char*, const char*>>
{
};

TEST_P(NeoSlice, HoldsNeoEntriesThatASecondVirtualRunReuses)
{
  auto root = virtual_device::IntelRoot::locate();
  if (!root) {
    GTEST_SKIP() << root.error().message();
  }
  ::setenv("PREWARM_CL_REPLAY", PREWARM_CL_REPLAY, 1);
  auto tool = virtual_device::locate_replay_tool();
  ASSERT_TRUE(tool) << tool.error().message();

  const auto [target_name, pci_id] = GetParam();
  auto registry = manifest::TargetRegistry::embedded();
  auto presets = manifest::PresetLibrary::embedded();
  ASSERT_TRUE(registry && presets);
  auto manifest = manifest::parse_manifest(k_manifest, "test", ".", {*registry, *presets});
  ASSERT_TRUE(manifest) << manifest.error().message();
  const auto* target = registry->find(target_name);
  ASSERT_NE(target, nullptr);
  manifest::Job job;
  job.id = std::string(target_name) + "/gptq-linear/fp32";
  job.target = target_name;
  job.model = "gptq-linear";
  job.strategy = manifest::Strategy::aot;
  auto work = TempDir::create("prewarm-neo-slice-test-");
  ASSERT_TRUE(work);
  const jobs::JobContext context{*manifest, job, manifest->models.front(), *target, work->path()};

  auto slice = virtual_device::make_neo_slice(*root, *tool, context, 2);
  ASSERT_TRUE(slice) << slice.error().message();
  std::cout << target_name << ": " << slice->device << "\n  " << slice->summary << "\n";

  const auto neo = slice->output.staging_dir / "neo";
  const auto entries = virtual_device::neo_cache_entries(neo);
  ASSERT_FALSE(entries.empty());
  for (const auto& e : fs::recursive_directory_iterator(slice->output.staging_dir)) {
    if (e.is_regular_file()) {
      EXPECT_EQ(e.path().extension(), ".cl_cache") << e.path() << ": only entries are packaged";
    }
  }
  EXPECT_EQ(requirement(slice->output, "pci-id"), std::string("== ") + pci_id);
  EXPECT_EQ(requirement(slice->output, "vendor"), "== intel");
  EXPECT_EQ(requirement(slice->output, "intel.driver").substr(0, 8), "in 26.27");
  // A host probed through Level Zero only reports 1.3.<build>.
  EXPECT_TRUE(requirement(slice->output, "intel.driver").ends_with(",1.3.39122"));
  EXPECT_EQ(requirement(slice->output, "intel.igc"), "== " + *host::igc_identity_of(root->igc_library()));
  // Both profiles assume the card's PCI revision (unknown: key.revision), so the
  // slice does not require one (inspect and install name it as not known).
  EXPECT_EQ(requirement(slice->output, "pci-revision"), "(none)");
  // The device's IP version, as `ocloc ids` names the registry's ocloc device;
  // the B580's card value is assumed too (unknown: key.ip_version).
  ASSERT_FALSE(target->ip_version.empty());
  EXPECT_EQ(requirement(slice->output, "intel.ip-version"),
            target_name == std::string_view("arc-b580") ? "(none)" : "== " + target->ip_version);
  // Both targets have a key profile: the slice also holds the card's entries
  // (neo_card_slice.hpp) and accepts the card's extension lists, without and
  // with libva's media sharing, beside the virtual device's.
  const auto extensions = requirement(slice->output, "intel.opencl-extensions");
  EXPECT_TRUE(extensions.starts_with("in ")) << extensions;
  EXPECT_EQ(std::ranges::count(extensions, ','), 2) << extensions;
  EXPECT_NE(slice->report_json.find("\"card\":{"), std::string::npos) << slice->report_json;
  EXPECT_EQ(entries.size(), 3u) << "the recorder's entry and the card's two";

  // The executor's proof, read back from its report...
  EXPECT_NE(slice->report_json.find("\"proof_new_entries\":0"), std::string::npos) << slice->report_json;
  EXPECT_NE(slice->report_json.find("\"proof_misses\":0"), std::string::npos) << slice->report_json;

  // ...and once more here, in a process of our own on the packaged files.
  auto variants = aot::workload_variants(*manifest->models.front().architecture, model::Precision::fp32,
                                         manifest->shapes, manifest->coverage);
  ASSERT_TRUE(variants);
  auto device = virtual_device::virtual_device_for(*target);
  ASSERT_TRUE(device);
  // The programs exactly as the executor built them (its fill directory).
  std::vector<virtual_device::ReplayProgram> programs;
  const auto kept = work->path() / "virtual-fill";
  const std::vector<std::string> before = entries;
  virtual_device::ReplayRun again{*tool, work->path() / "again", neo};
  again.stats = true;
  const std::string list = *read_file((kept / "programs.list").string());
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = list.find('\n', at)) != std::string::npos; ++at) {
    ++lines;
  }
  EXPECT_EQ(lines, variants->size());
  for (std::size_t at = 0, line = 0; line < lines; ++line) {
    const auto end = list.find('\n', at);
    const auto tab = list.find('\t', at);
    programs.push_back({fs::path(list.substr(at, tab - at)).filename().string(),
                        *read_file((kept / list.substr(at, tab - at)).string()), list.substr(tab + 1, end - tab - 1)});
    at = end + 1;
  }
  auto replayed = virtual_device::replay_programs(*root, *device, programs, again);
  ASSERT_TRUE(replayed) << replayed.error().message();
  EXPECT_EQ(replayed->built, programs.size());
  EXPECT_EQ(virtual_device::neo_cache_entries(neo), before) << "the second run wrote a new entry";
  auto stats = virtual_device::read_neo_cache_stats(neo);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->hits, programs.size());
  EXPECT_EQ(stats->misses, 0u);
}

INSTANTIATE_TEST_SUITE_P(AbsentIntelTargets, NeoSlice,
                         ::testing::Values(std::pair{"arc-b580", "0xe20b"}, std::pair{"mtl-u-igpu", "0x7d40"}),
                         [](const auto& param_info) {
                           std::string name = param_info.param.first;
                           std::erase(name, '-');
                           return name;
                         });

} // namespace

// The parts read without the root: NEO's key trace, its statistics, the keys.
namespace {

TEST(NeoKeyTrace, RevisionAndIgcIdentityComeFromTheTrace)
{
  auto dir = TempDir::create("prewarm-neo-trace-test-");
  ASSERT_TRUE(dir);
  // As NEO 26.27 writes it (BinaryCacheTrace=1), abridged.
  ASSERT_TRUE(write_file_atomic(dir->path() / "0b326a5995b2f204.trace",
                                "---- igcRevision ----\n(null)\n  libSize=100312632\n  libMTime=1788812530\n"
                                "---- platform ----\n  eProductFamily=1270\n  usDeviceID=22181\n  usRevId=5\n"
                                "  usDeviceID_PCH=0\n  usRevId_PCH=0\n",
                                0644, Durability::none));
  auto key = virtual_device::read_traced_key(dir->path());
  ASSERT_TRUE(key) << key.error().message();
  EXPECT_EQ(key->device_id, "0x56a5");
  EXPECT_EQ(key->revision, "0x05");
  EXPECT_EQ(key->igc_identity, "100312632:1788812530");
}

TEST(NeoKeyTrace, ATraceWithoutTheKeyInputsIsAnError)
{
  auto dir = TempDir::create("prewarm-neo-trace-test-");
  ASSERT_TRUE(dir);
  EXPECT_FALSE(virtual_device::read_traced_key(dir->path())); // no trace at all: the cache was off
  ASSERT_TRUE(write_file_atomic(dir->path() / "a.trace", "  usDeviceID=22181\n  libSize=1\n", 0644, Durability::none));
  const auto key = virtual_device::read_traced_key(dir->path());
  ASSERT_FALSE(key);
  EXPECT_NE(key.error().message().find("lacks usDeviceID, usRevId, libSize or libMTime"), std::string::npos);
}

TEST(NeoCacheStats, HitsThenMisses)
{
  auto dir = TempDir::create("prewarm-neo-stats-test-");
  ASSERT_TRUE(dir);
  EXPECT_FALSE(virtual_device::read_neo_cache_stats(dir->path()));
  const std::uint64_t counters[3] = {7, 2, 1}; // as NEO_CACHE_STATS=1 wrote them after 7 hits, 2 misses
  ASSERT_TRUE(write_file_atomic(dir->path() / "stats",
                                std::string_view(reinterpret_cast<const char*>(counters), sizeof counters), 0644,
                                Durability::none));
  const auto stats = virtual_device::read_neo_cache_stats(dir->path());
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->hits, 7u);
  EXPECT_EQ(stats->misses, 2u);
}

TEST(VirtualDevice, PosesAsTheRegistrysFirstIdWithOclocsAcronym)
{
  manifest::Target target{"arc-a380", manifest::Vendor::intel, "A380", {"0x56a5", "0x56a6"}, "acm-g11", "", "", 0, {}};
  auto device = virtual_device::virtual_device_for(target);
  ASSERT_TRUE(device);
  const auto variables = virtual_device::virtual_device_variables(*device);
  EXPECT_EQ(variables.at("ProductFamilyOverride"), "acm-g11");
  EXPECT_EQ(variables.at("ForceDeviceId"), "56a5");
  EXPECT_EQ(variables.at("SetCommandStreamReceiver"), "5");
  EXPECT_EQ(variables.at("NEOReadDebugKeys"), "1");
  target.pci_ids.clear();
  const auto none = virtual_device::virtual_device_for(target);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().category(), Errc::usage);
}

TEST(VirtualCommand, ASyclItemCutOffByTheDeadlineIsDroppedWhole)
{
  auto dir = TempDir::create("prewarm-sycl-items-test-");
  ASSERT_TRUE(dir);
  // SYCL's layout: <device hash>/<image hash>/<spec constants>/<options>/<n>.bin|.src|_access_time.txt;
  // <n>.lock exists while <n> is written.
  const auto item = dir->path() / "1/2/3/4";
  fs::create_directories(item);
  for (const auto* name : {"0.bin", "0.src", "0_access_time.txt", "1.bin", "1.src", "1.lock"}) {
    ASSERT_TRUE(write_file_atomic(item / name, "x", 0644, Durability::none));
  }
  EXPECT_EQ(virtual_device::sycl_cache_items(dir->path()), (std::vector<std::string>{"1/2/3/4/0.bin", "1/2/3/4/1.bin"}));
  EXPECT_EQ(virtual_device::drop_interrupted_sycl_items(dir->path()), 1u);
  EXPECT_EQ(virtual_device::sycl_cache_items(dir->path()), (std::vector<std::string>{"1/2/3/4/0.bin"}));
  EXPECT_FALSE(fs::exists(item / "1.src"));
  EXPECT_FALSE(fs::exists(item / "1.lock"));
  EXPECT_TRUE(fs::exists(item / "0.src"));
}

TEST(VirtualCommand, TheDeviceNameIsTheRegistrysOrTheProfilesOrNone)
{
  const auto registry = manifest::TargetRegistry::embedded();
  ASSERT_TRUE(registry) << registry.error().message();
  const auto device_of = [&](std::string_view name) {
    const auto* target = registry->find(name);
    EXPECT_NE(target, nullptr) << name;
    auto device = virtual_device::virtual_device_for(*target);
    EXPECT_TRUE(device) << device.error().message();
    return device ? device->device_name : std::string("?");
  };
  // No key profile is carried for the A750: the name is the registry's.
  EXPECT_EQ(device_of("arc-a750"), "Intel(R) Arc(TM) A750 Graphics");
  // Neither a profile nor a registry name: NEO's own virtual name stays.
  EXPECT_EQ(device_of("lnl-igpu"), "");
  // Where a carried profile names the card too, the two agree.
  for (const auto& target : registry->targets()) {
    const auto profile = manifest::embedded_intel_profile(target.name);
    ASSERT_TRUE(profile) << profile.error().message();
    const auto listed = target.device_names.find(target.pci_ids.empty() ? "" : target.pci_ids.front());
    if (*profile && listed != target.device_names.end()) {
      EXPECT_EQ((*profile)->device_name.value, listed->second) << target.name;
    }
  }
  const auto driver = jobs::intel_driver_requirement("26.27.039122");
  EXPECT_EQ(driver.op, "in");
  EXPECT_EQ(driver.value, "26.27.039122,26.27.39122,1.3.39122");
}

// The names are checked against the driver itself, not against our copy of
// its table: each registry name is a C string in the Intel root's Level Zero
// driver (where NEO's device table is compiled in).
TEST(VirtualCommand, EveryRegistryDeviceNameIsOneTheDriverCarries)
{
  const auto root = virtual_device::IntelRoot::locate();
  if (!root) {
    GTEST_SKIP() << root.error().message();
  }
  // The driver's name is a link to the versioned library.
  const auto driver = read_file(fs::canonical(root->level_zero_driver()).string(), 256 << 20);
  ASSERT_TRUE(driver) << driver.error().message();
  const auto registry = manifest::TargetRegistry::embedded();
  ASSERT_TRUE(registry) << registry.error().message();
  int names = 0;
  for (const auto& target : registry->targets()) {
    for (const auto& [id, name] : target.device_names) {
      const auto c_string = std::string(1, '\0') + name + '\0';
      EXPECT_NE(driver->find(c_string), std::string::npos) << target.name << " " << id << ": " << name;
      ++names;
    }
  }
  EXPECT_GE(names, 5);
}

} // namespace
