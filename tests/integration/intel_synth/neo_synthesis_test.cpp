// SPDX-License-Identifier: Apache-2.0
// Synthesized NEO entries checked against NEO itself (NEO 26.27 of the Intel
// root on virtual devices; skips without the root).
// For bmg, acm-g10, acm-g11, mtl-u and mtl-h, OpenCL and Level Zero, with the
// built-in engine's programs (suite Neo2627), and with two applications as a
// user runs them (suite Neo2627Apps, on bmg, acm-g10 and mtl-u): clpeak from
// Debian (OpenCL C) and dpctl from PyPI (SYCL: SPIR-V through Level Zero and
// through OpenCL):
//  (a) NEO records every program (BinaryCacheTrace=1); synthesis for the
//      recorder's own key inputs gives exactly NEO's entry names and bytes;
//  (b) entries synthesized for a second configuration of the same family
//      (another device id, revision or IP version, which NEO can pose as)
//      are all hits when NEO runs as it (NEO_CACHE_STATS: 0 misses, no new
//      entry); a miss is explained by the first key field that differs
//      between NEO's own trace in that configuration and ours;
//  and the target's key profile (manifests/intel-profiles) is synthesized,
//  timed against the recording (the warm-up). Level Zero's bindless mode (what a card
//  uses) cannot run here: NEO's no-hardware mode aborts with it
//  (bindless_heaps_helper.cpp:69), so bindless entries are checked by name
//  and bytes through (a)'s method only, never by a hit.
#include "aot/kernel_variants.hpp"
#include "aot/ocloc.hpp"
#include "base/embedded_file.hpp"
#include "base/files.hpp"
#include "manifest/intel_profile.hpp"
#include "manifest/manifest.hpp"
#include "manifest/presets.hpp"
#include "process/run.hpp"
#include "virtual_device/neo_cache_key.hpp"
#include "virtual_device/neo_extension_list.hpp"
#include "virtual_device/neo_synthesis.hpp"
#include "virtual_device/virtual_device.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <span>
#include <thread>

namespace prewarm::kernels {
std::span<const prewarm::EmbeddedFile> embedded_files();
}

using namespace prewarm;
using namespace prewarm::virtual_device;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_manifest = R"(version: 1
models:
  - name: qwen2.5-0.5b
    preset: qwen2.5-0.5b
  - name: gptq-linear
    preset: gptq-linear
precisions: [fp32]
shapes:
  batch_sizes: [1]
  prefill_lengths: [16]
  decode_steps: 2
targets: [arc-b580]
bundle:
  channel: default
  expires: 90d
)";

struct Configuration
{
  std::string product;   // ProductFamilyOverride
  std::string device_id; // ForceDeviceId
  std::string ip_version;
  process::Environment debug_keys; // OverrideRevision
};

// What builds the programs NEO records.
enum class App
{
  engine, // the built-in engine's programs (OpenCL C, and their SPIR-V through Level Zero)
  clpeak, // Debian's clpeak in the Intel root: its one OpenCL C program
  dpctl,  // dpctl on Intel's SYCL runtime (./setup.sh intel-sycl): SPIR-V through Level Zero and OpenCL
};

std::string_view
app_name(App app)
{
  switch (app) {
  case App::engine:
    return "engine";
  case App::clpeak:
    return "clpeak";
  case App::dpctl:
    return "dpctl";
  }
  return "?";
}

struct Case
{
  App app;
  std::string target; // registry / profile name
  Configuration recorder;
  Configuration second;
  std::uint16_t second_revision; // usRevId NEO reports in the second configuration
};

// ctest's test names hold the parameter as gtest prints it: the target, not its bytes.
void
PrintTo(const Case& c, std::ostream* out)
{
  *out << app_name(c.app) << " " << c.target;
}

// The ocloc compiles of a synthesis run as `prewarm build --jobs $(nproc)` runs them.
unsigned
synthesis_jobs()
{
  return std::max(1u, std::thread::hardware_concurrency());
}

double
since(std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class NeoSynthesis : public ::testing::TestWithParam<Case>
{
protected:
  void SetUp() override
  {
    auto root = IntelRoot::locate();
    if (!root) {
      GTEST_SKIP() << root.error().message();
    }
    m_root.emplace(std::move(*root));
    auto ocloc = aot::Ocloc::at(m_root->dir() / "host-bin" / "ocloc");
    ASSERT_TRUE(ocloc) << ocloc.error().message();
    m_ocloc.emplace(std::move(*ocloc));
    auto work = TempDir::create("prewarm-neo-synthesis-test-");
    ASSERT_TRUE(work);
    m_work.emplace(std::move(*work));

    const auto app = GetParam().app;
    if (app == App::clpeak && !fs::exists(clpeak())) {
      GTEST_SKIP() << "the Intel root has no clpeak (./setup.sh intel-root installs it where sid carries it)";
    }
    if (app == App::dpctl && !fs::exists(sycl_python().parent_path().parent_path() / ".complete")) {
      GTEST_SKIP() << "no Intel SYCL environment with dpctl (./setup.sh intel-sycl)";
    }
    if (app != App::engine) {
      return;
    }
    auto registry = manifest::TargetRegistry::embedded();
    auto presets = manifest::PresetLibrary::embedded();
    ASSERT_TRUE(registry && presets);
    auto parsed = manifest::parse_manifest(k_manifest, "test", ".", {*registry, *presets});
    ASSERT_TRUE(parsed) << parsed.error().message();
    for (const auto& model : parsed->models) {
      auto variants =
        aot::workload_variants(*model.architecture, model::Precision::fp32, parsed->shapes, parsed->coverage);
      ASSERT_TRUE(variants);
      for (const auto& v : *variants) {
        const auto text = find_embedded(kernels::embedded_files(), v.source_name);
        ASSERT_TRUE(text) << v.source_name;
        m_programs.push_back({v.source_name, std::string(*text), v.options});
      }
    }
  }

  fs::path clpeak() const { return m_root->dir() / "usr" / "bin" / "clpeak"; }
  fs::path sycl_python() const { return m_root->dir() / "opt" / "prewarm-sycl" / "bin" / "python"; }

  // Everything the case's application builds, on the virtual device `c`,
  // into `cache`: the warm-up (trace: NEO's key inputs beside each entry) or
  // the proof (stats: NEO's hits and misses). Returns its wall time.
  Result<double> build_on(const Configuration& c, const fs::path& cache, bool trace, bool stats)
  {
    return GetParam().app == App::engine ? build_engine_on(c, cache, trace, stats) : run_app_on(c, cache, trace, stats);
  }

  // The environment of a process on the virtual device `c` with NEO's cache in `cache`.
  process::Environment virtual_environment(const Configuration& c, const fs::path& cache, bool trace, bool stats)
  {
    process::Environment environment{{"PATH", "/usr/bin:/bin"}, {"HOME", m_work->path().string()}};
    for (auto& [name, value] : virtual_device_variables(VirtualDevice{c.product, c.device_id, {}})) {
      environment.insert_or_assign(name, value);
    }
    for (auto& [name, value] : c.debug_keys) {
      environment.insert_or_assign(name, value);
    }
    environment.insert_or_assign("NEO_CACHE_DIR", cache.string());
    environment.insert_or_assign("NEO_CACHE_PERSISTENT", "1");
    environment.insert_or_assign("NEO_CACHE_MAX_SIZE", "0");
    if (trace) {
      environment.insert_or_assign("BinaryCacheTrace", "1");
    }
    if (stats) {
      environment.insert_or_assign("NEO_CACHE_STATS", "1");
    }
    return environment;
  }

  // The application as a user runs it, under the root's loader. Kernels do
  // not execute on a virtual device: clpeak waits forever for its first
  // kernel, so a run ends when the application prints what it prints once
  // every program is built (then it is killed); dpctl's warm-up returns.
  Result<double> run_app_on(const Configuration& c, const fs::path& cache, bool trace, bool stats)
  {
    struct Run
    {
      fs::path program;
      std::vector<std::string> arguments;
      std::string_view built; // printed once every program is built
    };
    std::vector<Run> runs;
    if (GetParam().app == App::clpeak) {
      // One test: clpeak builds its one program (every test's kernels) before any.
      runs.push_back({clpeak(), {"--kernel-latency"}, "Kernel launch latency"});
    } else {
      for (const auto* backend : {"level_zero:gpu", "opencl:gpu"}) {
        runs.push_back({sycl_python(), {"-u", PREWARM_SYCL_WARMUP, backend}, "result:"});
      }
    }
    const auto started = std::chrono::steady_clock::now();
    fs::create_directories(cache); // NEO disables a cache whose directory is missing
    auto environment = virtual_environment(c, cache, trace, stats);
    PW_ASSIGN(auto icd, m_root->opencl_environment(m_work->path() / "vendors"));
    environment.merge(icd);
    // The SYCL runtime's v1 Level Zero adapter (v2 cannot make a context on a
    // virtual device: virtual_command.hpp), and no SYCL persistent cache:
    // every run's programs go through NEO's cache, which is what is proven.
    environment.insert_or_assign("UR_LOADER_USE_LEVEL_ZERO_V2", "0");
    environment.insert_or_assign("SYCL_UR_USE_LEVEL_ZERO_V2", "0");
    environment.insert_or_assign("SYCL_CACHE_PERSISTENT", "0");
    for (const auto& run : runs) {
      process::Spec spec;
      spec.argv = m_root->command(run.program, run.arguments);
      spec.environment = environment;
      std::mutex mutex;
      std::string output;
      process::Supervision supervision;
      supervision.timeout = std::chrono::seconds(300);
      supervision.on_output = [&](const char* data, std::size_t size) {
        const std::lock_guard lock(mutex);
        output.append(data, size);
      };
      supervision.stop_requested = [&] {
        const std::lock_guard lock(mutex);
        return output.find(run.built) != std::string::npos;
      };
      auto outcome = process::run(spec, supervision);
      const bool built = output.find(run.built) != std::string::npos;
      if (!outcome || !built || !(outcome->succeeded() || outcome->ending == process::Outcome::Ending::stopped)) {
        return fail(Errc::failed, fmt::format("{} on {} {}: {}: {}", run.program.filename().string(), c.product,
                                              c.device_id, outcome ? outcome->describe() : outcome.error().describe(spec),
                                              output));
      }
    }
    return since(started);
  }

  // The OpenCL programs through prewarm-cl-replay, then the same programs'
  // SPIR-V through Level Zero (ze_build.py under the root's python).
  Result<double> build_engine_on(const Configuration& c, const fs::path& cache, bool trace, bool stats)
  {
    const auto started = std::chrono::steady_clock::now();
    const VirtualDevice device{c.product, c.device_id, {}};
    ReplayRun run{PREWARM_CL_REPLAY, cache.parent_path() / (cache.filename().string() + "-cl"), cache};
    run.trace = trace;
    run.stats = stats;
    run.debug_keys = c.debug_keys;
    PW_ASSIGN(auto replayed, replay_programs(*m_root, device, m_programs, run));
    if (!replayed.failed.empty() || replayed.built != m_programs.size()) {
      return fail(Errc::failed, fmt::format("OpenCL builds on {}: {} of {} built", device.describe(),
                                            replayed.built, m_programs.size()));
    }
    PW_TRY(spirv_modules(c.product));
    const auto environment = virtual_environment(c, cache, trace, stats);
    std::vector<std::string> arguments{"-u", PREWARM_ZE_BUILD};
    for (const auto& spv : m_spirv) {
      arguments.insert(arguments.end(), {spv.string(), "", ""});
    }
    process::Spec spec;
    spec.argv = m_root->command(m_root->dir() / "usr" / "bin" / "python3", arguments);
    spec.environment = environment;
    process::Supervision supervision;
    supervision.timeout = std::chrono::seconds(300);
    auto outcome = process::run(spec, supervision);
    if (!outcome || !outcome->succeeded()) {
      return fail(Errc::failed, fmt::format("Level Zero builds on {}: {}", device.describe(),
                                            outcome ? outcome->describe() + ": " + outcome->output
                                                    : outcome.error().describe(spec)));
    }
    return since(started);
  }

  // Level Zero takes SPIR-V: the engine's programs through the root's ocloc
  // (as the engine's Level Zero path gets them), made once.
  Status spirv_modules(const std::string& product)
  {
    if (!m_spirv.empty()) {
      return {};
    }
    const auto dir = m_work->path() / "spirv";
    fs::create_directories(dir);
    for (std::size_t i = 0; i < m_programs.size(); ++i) {
      const auto& p = m_programs[i];
      PW_ASSIGN(auto spirv, m_ocloc->compile_spirv({p.name, p.source, p.options, product}));
      const auto file = dir / fmt::format("{:03}.spv", i);
      PW_TRY(write_file_atomic(file, spirv, 0644, Durability::none));
      m_spirv.push_back(file);
    }
    return {};
  }

  // The virtual device's CL_DEVICE_EXTENSIONS (what NEO's lists are made of).
  Result<std::string> device_extensions(const Configuration& c)
  {
    const auto dir = m_work->path() / ("probe-" + c.product);
    PW_ASSIGN(const auto probed, replay_programs(*m_root, VirtualDevice{c.product, c.device_id, {}}, {},
                                                 {PREWARM_CL_REPLAY, dir, dir / "neo"}));
    return probed.extensions;
  }

  std::optional<IntelRoot> m_root;
  std::optional<aot::Ocloc> m_ocloc;
  std::optional<TempDir> m_work;
  std::vector<ReplayProgram> m_programs;
  std::vector<fs::path> m_spirv;
};

// A key whose -cl-ext= lists are the virtual device's own.
void
with_recorder_lists(neo::CardKey& key, std::string_view extensions)
{
  key.recorder_extensions = neo::split_names(extensions);
  key.extension_lists = {key.recorder_extensions};
}

neo::CardKey
recorder_key(const neo::RecordedEntry& any, const Configuration& c, std::string_view extensions)
{
  neo::CardKey key;
  with_recorder_lists(key, extensions);
  key.target = "recorder " + c.product;
  key.device_id = any.traced.inputs.platform.device_id;
  key.revision = any.traced.inputs.platform.revision;
  key.ip_version = *neo::IpVersion::parse(c.ip_version);
  key.level_zero_bindless = false; // the recorder runs with UseBindlessMode=0
  return key;
}

TEST_P(NeoSynthesis, NamesAndBytesAreNeosAndASecondConfigurationHitsEveryEntry)
{
  const auto& c = GetParam();
  const auto recorded_dir = m_work->path() / "recorded";
  auto warm_up = build_on(c.recorder, recorded_dir, true, false);
  ASSERT_TRUE(warm_up) << warm_up.error().message();
  auto recorded = neo::recorded_entries(recorded_dir, *neo::IpVersion::parse(c.recorder.ip_version));
  ASSERT_TRUE(recorded) << recorded.error().message();
  const auto written = neo_cache_entries(recorded_dir);
  ASSERT_EQ(recorded->size(), written.size()) << "every entry NEO wrote has its trace";
  const auto opencl = std::ranges::count_if(*recorded, [](const auto& r) { return r.api == neo::CacheApi::opencl; });
  const auto level_zero = recorded->size() - static_cast<std::size_t>(opencl);
  switch (c.app) {
  case App::engine:
    EXPECT_EQ(static_cast<std::size_t>(opencl), m_programs.size());
    EXPECT_EQ(level_zero, m_spirv.size());
    break;
  case App::clpeak:
    EXPECT_GE(opencl, 1) << "clpeak built no OpenCL program";
    EXPECT_EQ(level_zero, 0u);
    break;
  case App::dpctl:
    // SPIR-V through both of the SYCL runtime's backends.
    EXPECT_GE(opencl, 1) << "dpctl built nothing through OpenCL";
    EXPECT_GE(level_zero, 1u) << "dpctl built nothing through Level Zero";
    break;
  }

  // (a) the recorder's own inputs: NEO's names, NEO's bytes.
  std::size_t names = 0;
  std::size_t same_bytes = 0;
  for (const auto& r : *recorded) {
    names += neo::cached_file_name(r.traced.inputs) == r.traced.name ? 1 : 0;
  }
  const auto identity = m_work->path() / "identity";
  auto extensions = device_extensions(c.recorder);
  ASSERT_TRUE(extensions) << extensions.error().message();
  auto own = neo::synthesize(*m_ocloc, *recorded, recorder_key(recorded->front(), c.recorder, *extensions), identity,
                             synthesis_jobs());
  ASSERT_TRUE(own) << own.error().message();
  EXPECT_TRUE(own->skipped.empty()) << own->skipped.front();
  auto sorted = own->entries;
  std::ranges::sort(sorted);
  EXPECT_EQ(sorted, written) << "synthesized names differ from NEO's";
  for (const auto& path : written) {
    const auto theirs = read_file((recorded_dir / path).string());
    const auto ours = read_file((identity / path).string());
    if (theirs && ours && *theirs == *ours) {
      ++same_bytes;
    } else {
      ADD_FAILURE() << path << ": the synthesized bytes differ from NEO's";
    }
  }
  EXPECT_EQ(names, written.size());

  // (b) another configuration NEO can pose as: synthesized, then NEO as it.
  neo::CardKey second;
  second.target = "second " + c.second.product;
  second.device_id = static_cast<std::uint16_t>(std::stoul(c.second.device_id, nullptr, 16));
  second.revision = c.second_revision;
  second.ip_version = *neo::IpVersion::parse(c.second.ip_version);
  with_recorder_lists(second, *extensions);
  const auto second_dir = m_work->path() / "second";
  auto made = neo::synthesize(*m_ocloc, *recorded, second, second_dir, synthesis_jobs());
  ASSERT_TRUE(made) << made.error().message();
  const auto before = neo_cache_entries(second_dir);
  auto proof = build_on(c.second, second_dir, false, true);
  ASSERT_TRUE(proof) << proof.error().message();
  const auto stats = read_neo_cache_stats(second_dir);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->hits, recorded->size()) << "a synthesized entry was not found";
  // Programs the second configuration builds and the recorder never did:
  // NEO 26.27 builds its own fill builtin from OpenCL C where it has no
  // precompiled builtins for the IP version (BMG 20.1.4: dpctl's fill over
  // OpenCL). No recording on the recorder's configuration holds them, so
  // they are counted and shown, not a failure of the synthesis.
  std::vector<std::string> only_second;
  if (stats->misses > 0) {
    // Each miss is one of those, or a synthesized entry under another name:
    // then the first key field that differs, NEO's own trace in that
    // configuration against ours, fails the test.
    const auto theirs_dir = m_work->path() / "second-traced";
    ASSERT_TRUE(build_on(c.second, theirs_dir, true, false));
    auto theirs = neo::recorded_entries(theirs_dir, second.ip_version);
    ASSERT_TRUE(theirs);
    for (const auto& t : *theirs) {
      const auto same = std::ranges::find_if(*recorded, [&](const neo::RecordedEntry& r) {
        return r.api == t.api && r.traced.inputs.input == t.traced.inputs.input &&
               r.traced.inputs.options == t.traced.inputs.options;
      });
      if (same == recorded->end()) {
        only_second.push_back(fmt::format("{} ({} bytes of input, options '{}')", t.path,
                                          t.traced.inputs.input.size(), t.traced.inputs.options));
        continue;
      }
      auto ours = neo::card_inputs(*same, second);
      ASSERT_TRUE(ours);
      const auto difference = neo::first_difference(ours->front(), t.traced.inputs);
      EXPECT_TRUE(difference.empty()) << t.path << ": first differing key field: " << difference;
    }
  }
  EXPECT_EQ(stats->misses, only_second.size()) << "a synthesized entry missed";
  EXPECT_EQ(neo_cache_entries(second_dir).size(), before.size() + only_second.size())
    << "NEO compiled anew in the second configuration what the recorder built";
  for (const auto& program : only_second) {
    std::cout << "only the second configuration builds: " << program << "\n";
  }

  // The target's card, from its key profile: synthesized and timed.
  auto profile = manifest::embedded_intel_profile(c.target);
  ASSERT_TRUE(profile && profile->has_value());
  auto card = neo::card_key(**profile, *extensions);
  ASSERT_TRUE(card) << card.error().message();
  const auto card_dir = m_work->path() / "card";
  auto synthesized = neo::synthesize(*m_ocloc, *recorded, *card, card_dir, synthesis_jobs());
  ASSERT_TRUE(synthesized) << synthesized.error().message();
  // Every OpenCL program twice (with and without libva's extension), Level Zero once.
  EXPECT_EQ(synthesized->entries.size(), 2 * static_cast<std::size_t>(opencl) + level_zero);
  for (const auto& path : synthesized->entries) {
    EXPECT_FALSE(fs::exists(recorded_dir / path)) << path << ": the card's key equals the virtual device's";
  }
  if (c.app == App::engine) {
    // Synthesis compiles an OpenCL C program once for both of its names (without
    // and with libva's extensions) where the source never names them: ocloc
    // gives the same bytes either way. Checked here by compiling the second
    // variant too.
    std::size_t compared = 0;
    for (const auto& r : *recorded) {
      auto variants = neo::card_inputs(r, *card);
      ASSERT_TRUE(variants);
      if (r.api != neo::CacheApi::opencl || variants->size() != 2) {
        continue;
      }
      aot::OclocCompileRequest request;
      request.source_name = r.traced.name;
      request.source = std::string_view(r.traced.inputs.input).substr(0, r.traced.inputs.input.find('\0'));
      request.options = r.traced.inputs.options;
      request.internal_options = (*variants)[1].internal_options;
      request.stateful_address_mode = "bindful";
      request.device = card->ip_version.text();
      auto with_libva = m_ocloc->compile(request);
      ASSERT_TRUE(with_libva) << with_libva.error().message();
      const auto shipped = read_file(
        (card_dir / neo::cached_file_path(neo::cached_file_name((*variants)[1]), r.api)).string());
      ASSERT_TRUE(shipped);
      EXPECT_EQ(*shipped, with_libva->zebin) << r.traced.name << ": the binary depends on libva's extensions";
      ++compared;
    }
    EXPECT_EQ(compared, static_cast<std::size_t>(opencl));
  }
  std::uint64_t recorded_bytes = 0;
  for (const auto& path : written) {
    recorded_bytes += fs::file_size(recorded_dir / path);
  }
  std::cout << "figures: " << app_name(c.app) << " " << c.target << " (" << c.recorder.product << "): NEO wrote " << written.size()
            << " entries (" << opencl << " OpenCL, " << written.size() - opencl << " Level Zero, " << recorded_bytes
            << " bytes); names reproduced " << names << "/" << written.size() << "; bytes equal " << same_bytes << "/"
            << written.size() << "; second configuration " << c.second.product << " " << c.second.device_id
            << " rev " << c.second_revision << ": " << stats->hits << " hits, " << stats->misses
            << " misses (" << only_second.size() << " of programs the recorder never built); card synthesis: " << synthesized->entries.size() << " entries, " << synthesized->bytes
            << " bytes, " << fmt::format("{:.1f}", synthesized->seconds) << " s vs warm-up "
            << fmt::format("{:.1f}", *warm_up) << " s, " << synthesis_jobs() << " jobs ("
            << fmt::format("{:.2f}", synthesized->seconds / *warm_up) << "x)\n";
}

// Each target's recorder and a second configuration of the same family.
// B580: the IP version NEO also knows (20.1.4), another G21 id, revision 1
const Case k_bmg{App::engine, "arc-b580", {"bmg", "0xe20b", "20.1.0", {}},
                 {"20.1.4", "0xe20c", "20.1.4", {{"OverrideRevision", "1"}}}, 1};
// A770: the A750's id (DG2's revision follows the AOT configuration)
const Case k_acm_g10{App::engine, "arc-a770", {"acm-g10", "0x56a0", "12.55.8", {}}, {"acm-g10", "0x56a1", "12.55.8", {}}, 8};
// A380: the B0 stepping (12.56.4, revision 4) and the A310's id
const Case k_acm_g11{App::engine, "arc-a380", {"acm-g11", "0x56a5", "12.56.5", {}}, {"dg2-g11-b0", "0x56a6", "12.56.4", {}}, 4};
// Meteor Lake U and H: another id, and the PCI revision a real part reports
const Case k_mtl_u{App::engine, "mtl-u-igpu", {"mtl-u", "0x7d40", "12.70.4", {}},
                   {"mtl-u", "0x7d45", "12.70.4", {{"OverrideRevision", "8"}}}, 8};
const Case k_mtl_h{App::engine, "mtl-igpu", {"mtl-h", "0x7d55", "12.71.4", {}},
                   {"mtl-h", "0x7dd5", "12.71.4", {{"OverrideRevision", "3"}}}, 3};

Case
with_app(Case c, App app)
{
  c.app = app;
  return c;
}

std::string
case_name(const ::testing::TestParamInfo<Case>& info)
{
  std::string name = info.param.recorder.product;
  std::erase(name, '-');
  return info.param.app == App::engine ? name : fmt::format("{}_{}", app_name(info.param.app), name);
}

INSTANTIATE_TEST_SUITE_P(Neo2627, NeoSynthesis, ::testing::Values(k_bmg, k_acm_g10, k_acm_g11, k_mtl_u, k_mtl_h),
                         case_name);

// The applications on B580, A770 and Meteor Lake U (ctest: integration.intel_synth_apps.*).
INSTANTIATE_TEST_SUITE_P(Neo2627Apps, NeoSynthesis,
                         ::testing::Values(with_app(k_bmg, App::clpeak), with_app(k_acm_g10, App::clpeak),
                                           with_app(k_mtl_u, App::clpeak), with_app(k_bmg, App::dpctl),
                                           with_app(k_acm_g10, App::dpctl), with_app(k_mtl_u, App::dpctl)),
                         case_name);

} // namespace
