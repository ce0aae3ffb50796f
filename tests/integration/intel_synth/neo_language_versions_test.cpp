// SPDX-License-Identifier: Apache-2.0
// The card's -cl-ext= list checked against NEO 26.27 itself (the Intel root
// on virtual devices; skips without it), per OpenCL C language version:
// none, 1.0, 1.1, 1.2, 2.0, 3.0, C++ for OpenCL (CLC++ and CLC++2021).
//  (a) Pinned (what every build records, intel_root.hpp): NEO never lists
//      libva's extension, whatever this host has; the construction from the
//      virtual device's CL_DEVICE_EXTENSIONS gives NEO's recorded internal
//      options and entry names back for every version.
//  (b) With this host's libva (where libva.so.2 loads here; the case says
//      when it cannot run): NEO itself lists cl_intel_va_api_media_sharing,
//      and the list it then records per version (the empty slot below 1.2,
//      3d_image_writes after everything for 2.0, the features after the
//      extensions for 3.0) is exactly the one synthesis constructs for a card
//      with libva, placed by the target's key profile; the names agree.
// cl_khr_pci_bus_info cannot be made to appear on a virtual device (no PCI
// address): its place is checked against NEO's source and a real card's
// options (tests/unit/virtual_device/neo_extension_list_test.cpp).
#include "aot/ocloc.hpp"
#include "manifest/intel_profile.hpp"
#include "virtual_device/neo_cache_key.hpp"
#include "virtual_device/neo_extension_list.hpp"
#include "virtual_device/neo_synthesis.hpp"
#include "virtual_device/virtual_device.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

using namespace prewarm;
using namespace prewarm::virtual_device;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_source = "__kernel void add(__global float* a, float b) { a[get_global_id(0)] += b; }\n";
// Every -cl-std NEO reads; IGC 2.40's front end refuses CL1.0 and C++ for
// OpenCL ("expected -cl-std=CLMAJOR.MINOR"): NEO writes no entry for them,
// so there is nothing a card could look up, and nothing to synthesize.
const std::vector<std::string> k_versions = {"",
                                             "-cl-std=CL1.0",
                                             "-cl-std=CL1.1",
                                             "-cl-std=CL1.2",
                                             "-cl-std=CL2.0",
                                             "-cl-std=CL3.0",
                                             "-cl-std=CLC++",
                                             "-cl-std=CLC++2021"};
const std::vector<std::string> k_refused = {"-cl-std=CL1.0", "-cl-std=CLC++", "-cl-std=CLC++2021"};
const std::size_t k_built = k_versions.size() - k_refused.size();

struct Target
{
  std::string name;    // the registry's target, whose key profile places libva's extension
  std::string product; // ProductFamilyOverride
  std::string device_id;
  std::string ip_version;
};

struct Recording
{
  std::string extensions;                               // CL_DEVICE_EXTENSIONS
  std::map<std::string, neo::RecordedEntry> by_options; // one entry per program
};

class NeoLanguageVersions : public ::testing::TestWithParam<Target>
{
protected:
  void SetUp() override
  {
    auto root = IntelRoot::locate();
    if (!root) {
      GTEST_SKIP() << root.error().message();
    }
    m_root.emplace(std::move(*root));
    auto work = TempDir::create("prewarm-neo-versions-test-");
    ASSERT_TRUE(work);
    m_work.emplace(std::move(*work));
  }

  Result<Recording> record(IntelRoot::HostLibraries libraries, std::string_view name)
  {
    const auto& t = GetParam();
    std::vector<ReplayProgram> programs;
    for (const auto& options : k_versions) {
      programs.push_back({"add.cl", std::string(k_source), options});
    }
    const auto dir = m_work->path() / std::string(name);
    ReplayRun run{PREWARM_CL_REPLAY, dir, dir / "neo"};
    run.trace = true;
    run.libraries = libraries;
    PW_ASSIGN(const auto replayed, replay_programs(*m_root, VirtualDevice{t.product, t.device_id, {}}, programs, run));
    // "add.cl [OPTIONS]: status N" for each refused build
    const auto refused = std::ranges::count_if(replayed.failed, [](const std::string& f) {
      return std::ranges::any_of(k_refused,
                                 [&](const std::string& o) { return f.find("[" + o + "]") != std::string::npos; });
    });
    if (replayed.failed.size() != k_refused.size() || static_cast<std::size_t>(refused) != k_refused.size()) {
      return fail(Errc::failed, fmt::format("{}: failed builds {}", name, fmt::join(replayed.failed, "; ")));
    }
    PW_ASSIGN(auto entries, neo::recorded_entries(run.neo_cache, *neo::IpVersion::parse(t.ip_version)));
    Recording recording{replayed.extensions, {}};
    for (auto& entry : entries) {
      recording.by_options.emplace(entry.traced.inputs.options, std::move(entry));
    }
    return recording;
  }

  std::optional<IntelRoot> m_root;
  std::optional<TempDir> m_work;
};

constexpr std::string_view k_va = "cl_intel_va_api_media_sharing";

TEST_P(NeoLanguageVersions, TheConstructedListIsNeosForEveryVersion)
{
  auto pinned = record(IntelRoot::HostLibraries::pinned, "pinned");
  ASSERT_TRUE(pinned) << pinned.error().message();
  EXPECT_EQ(pinned->extensions.find(k_va), std::string::npos) << "the pinned virtual device lists libva's extension";
  ASSERT_EQ(pinned->by_options.size(), k_built) << "one entry per language version IGC builds";

  // (a) the virtual device's own lists: NEO's options and names back.
  neo::CardKey own;
  own.target = "recorder";
  own.recorder_extensions = neo::split_names(pinned->extensions);
  own.extension_lists = {own.recorder_extensions};
  std::size_t own_names = 0;
  for (const auto& [options, entry] : pinned->by_options) {
    SCOPED_TRACE("options '" + options + "'");
    auto made = neo::card_internal_options(entry.traced.inputs.internal_options, options, neo::CacheApi::opencl, own);
    ASSERT_TRUE(made) << made.error().message();
    ASSERT_EQ(made->size(), 1u);
    EXPECT_EQ(made->front(), entry.traced.inputs.internal_options);
    auto inputs = entry.traced.inputs;
    inputs.internal_options = made->front();
    own_names += neo::cached_file_name(inputs) == entry.traced.name ? 1 : 0;
  }
  EXPECT_EQ(own_names, k_built);

  // (c) the card's entries from the target's whole profile (libva's extension
  // and cl_khr_pci_bus_info): ocloc takes every constructed list, the empty
  // slot below 1.2 included; two names per program (without and with libva).
  auto ocloc = aot::Ocloc::at(m_root->dir() / "host-bin" / "ocloc");
  ASSERT_TRUE(ocloc) << ocloc.error().message();
  auto whole = manifest::embedded_intel_profile(GetParam().name);
  ASSERT_TRUE(whole && *whole);
  auto card_of_profile = neo::card_key(**whole, pinned->extensions);
  ASSERT_TRUE(card_of_profile) << card_of_profile.error().message();
  std::vector<neo::RecordedEntry> recorded;
  for (const auto& [options, entry] : pinned->by_options) {
    recorded.push_back(entry);
  }
  auto made = neo::synthesize(*ocloc, recorded, *card_of_profile, m_work->path() / "card", 2);
  ASSERT_TRUE(made) << made.error().message();
  EXPECT_TRUE(made->skipped.empty()) << made->skipped.front();
  EXPECT_EQ(made->entries.size(), 2 * k_built);
  std::cout << "figures: " << GetParam().name << ": card synthesis " << made->entries.size() << " entries, "
            << made->skipped.size() << " skipped, " << fmt::format("{:.1f}", made->seconds) << " s\n";

  // (b) NEO with this host's libva: its lists against the card's with libva.
  auto with_host = record(IntelRoot::HostLibraries::as_host, "host");
  ASSERT_TRUE(with_host) << with_host.error().message();
  if (with_host->extensions.find(k_va) == std::string::npos) {
    std::cout << "figures: " << GetParam().name << ": own names " << own_names << "/" << k_built
              << "; libva.so.2 does not load on this host: NEO's lists with libva not compared\n";
    GTEST_SKIP() << "libva.so.2 does not load here (apt-get install libva2 to compare NEO's lists with it)";
  }
  auto profile = manifest::embedded_intel_profile(GetParam().name);
  ASSERT_TRUE(profile && *profile);
  // Only what NEO can list here: libva's extension (no PCI address on a virtual device).
  std::erase_if((*profile)->opencl_extensions_added, [](const auto& e) { return e.name != k_va; });
  auto card = neo::card_key(**profile, pinned->extensions);
  ASSERT_TRUE(card) << card.error().message();
  ASSERT_EQ(card->extension_lists.size(), 2u);
  std::size_t libva_names = 0;
  for (const auto& [options, entry] : pinned->by_options) {
    SCOPED_TRACE("options '" + options + "'");
    const auto theirs = with_host->by_options.find(options);
    ASSERT_NE(theirs, with_host->by_options.end());
    auto made = neo::card_internal_options(entry.traced.inputs.internal_options, options, neo::CacheApi::opencl, *card);
    ASSERT_TRUE(made) << made.error().message();
    ASSERT_EQ(made->size(), 2u);
    EXPECT_EQ((*made)[0], entry.traced.inputs.internal_options);
    EXPECT_EQ((*made)[1], theirs->second.traced.inputs.internal_options);
    auto inputs = entry.traced.inputs;
    inputs.internal_options = (*made)[1];
    libva_names += neo::cached_file_name(inputs) == theirs->second.traced.name ? 1 : 0;
  }
  EXPECT_EQ(libva_names, k_built);
  std::cout << "figures: " << GetParam().name << " (" << GetParam().product << "): " << k_built
            << " language versions built (CL1.0 and C++ for OpenCL refused by IGC); names from the construction equal "
               "NEO's: pinned "
            << own_names << "/" << k_built << ", with this host's libva " << libva_names << "/" << k_built << "\n";
}

std::string
product_case_name(const ::testing::TestParamInfo<Target>& param)
{
  std::string name = param.param.product;
  std::erase(name, '-');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Neo2627, NeoLanguageVersions,
                         ::testing::Values(Target{"arc-b580", "bmg", "0xe20b", "20.1.0"},
                                           Target{"arc-a770", "acm-g10", "0x56a0", "12.55.8"},
                                           Target{"mtl-u-igpu", "mtl-u", "0x7d40", "12.70.4"}),
                         product_case_name);

} // namespace
