// SPDX-License-Identifier: Apache-2.0
// Points the real Level Zero loader at the test double (not a GPU) before the
// first zeInit of the process, and gives each test its own call log.
#pragma once

#include "base/files.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
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
