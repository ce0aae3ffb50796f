// SPDX-License-Identifier: Apache-2.0
// Points the real Level Zero loader at the test double (not a GPU) before the
// first zeInit of the process, and gives each test its own call log.
// use_executing_test_driver() also makes the double RUN launches: the OpenCL C
// behind each module (found through the AOT store) on the PoCL CPU device.
#pragma once

#include "base/files.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace prewarm::level_zero::testing {

inline void
use_test_driver()
{
  // Before zeInit: the loader reads ZE_ENABLE_ALT_DRIVERS once, at init.
  ::setenv("ZE_ENABLE_ALT_DRIVERS", PREWARM_ZE_TEST_DRIVER, 1);
  ::setenv("PREWARM_ZE_TEST_DEVICE_ID", "0x56a5", 1);
  ::unsetenv("PREWARM_ZE_TEST_PRODUCT_FAMILY");
  ::unsetenv("PREWARM_ZE_TEST_DRIVER_VERSION");
  ::unsetenv("PREWARM_ZE_TEST_DEVICE_COUNT");
  ::unsetenv("PREWARM_ZE_TEST_EXECUTE_SOURCES");
  ::unsetenv("PREWARM_ZE_TEST_EXECUTE_PROGRAMS");
  ::unsetenv("PREWARM_ZE_TEST_FP16");
}

// The double executes what it is given: a module's bytes must be a .zebin or
// .spv of the AOT store under `programs_dir` (aot/<device>/<key>.*), whose
// .meta names the source (by SHA-256, looked up in `sources_dir`, e.g. the
// repository's kernels/) and the build options. Anything else fails module
// creation with "test double cannot execute: ...".
inline void
use_executing_test_driver(const std::filesystem::path& sources_dir, const std::filesystem::path& programs_dir)
{
  use_test_driver();
  ::setenv("PREWARM_ZE_TEST_EXECUTE_SOURCES", sources_dir.c_str(), 1);
  ::setenv("PREWARM_ZE_TEST_EXECUTE_PROGRAMS", programs_dir.c_str(), 1);
}

// The driver appends one line per recorded call to this file.
class CallLog
{
public:
  CallLog()
  {
    auto dir = TempDir::create("test_only_ze-");
    EXPECT_TRUE(dir);
    m_dir.emplace(std::move(*dir));
    m_path = (m_dir->path() / "calls.log").string();
    ::setenv("PREWARM_ZE_TEST_LOG", m_path.c_str(), 1);
  }
  ~CallLog() { ::unsetenv("PREWARM_ZE_TEST_LOG"); }
  std::string text() const
  {
    auto t = read_file(m_path);
    return t ? *t : std::string();
  }
  const std::filesystem::path& dir() const { return m_dir->path(); }

private:
  std::optional<TempDir> m_dir;
  std::string m_path;
};

} // namespace prewarm::level_zero::testing
