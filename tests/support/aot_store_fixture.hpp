// SPDX-License-Identifier: Apache-2.0
// An AOT programs directory (runtime/level_zero/aot_programs.hpp) made once
// per test suite by the REAL ocloc, as an installed AOT slice would hold it.
// No ocloc, or a failed compile, is a skip reason rather than a failure: the
// suites that use it need ocloc to mean anything.
//
//   static void SetUpTestSuite() { s_store.emplace(SuiteAotStore::build("test_only_x-", targets, variants, sources)); }
//   static void TearDownTestSuite() { s_store.reset(); }
//   void SetUp() override { if (!s_store->skip_reason().empty()) GTEST_SKIP() << s_store->skip_reason(); }
#pragma once

#include "aot/aot_compiler.hpp"
#include "base/files.hpp"

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace prewarm::testing {

// The registry's A380 and Iris Xe entries, as most AOT suites use them.
inline const aot::AotTargetSpec k_arc_a380{"arc-a380", "acm-g11", "12.56.5", {"0x56a5"}};
inline const aot::AotTargetSpec k_iris_xe{"iris-xe", "tgllp", "12.0.0", {"0x9a40", "0x9a49"}};

class SuiteAotStore
{
public:
  static SuiteAotStore build(std::string_view prefix,
                             std::span<const aot::AotTargetSpec> targets,
                             std::span<const aot::KernelVariant> variants,
                             std::span<const EmbeddedFile> sources,
                             unsigned jobs = 2)
  {
    SuiteAotStore store;
    auto ocloc = aot::Ocloc::locate();
    if (!ocloc) {
      store.m_skip = "ocloc not usable: " + ocloc.error().message();
      return store;
    }
    auto dir = TempDir::create(std::string(prefix));
    if (!dir) {
      store.m_skip = dir.error().message();
      return store;
    }
    store.m_dir.emplace(std::move(*dir));
    aot::AotCompileOptions options;
    options.jobs = jobs;
    if (auto report = aot::compile_targets(*ocloc, targets, variants, sources, store.programs(), options); !report) {
      store.m_skip = "ocloc build failed: " + report.error().message();
    }
    store.m_ocloc.emplace(std::move(*ocloc));
    return store;
  }

  // Empty when the store was built.
  const std::string& skip_reason() const { return m_skip; }
  std::filesystem::path programs() const { return m_dir->path() / "programs"; }
  const aot::Ocloc& ocloc() const { return *m_ocloc; }
  // ocloc's OCL_DRIVER_VERSION: what a driver must report for the zebins to be served.
  const std::string& compiler() const { return m_ocloc->driver_version(); }

private:
  std::string m_skip;
  std::optional<TempDir> m_dir;
  std::optional<aot::Ocloc> m_ocloc;
};

} // namespace prewarm::testing
