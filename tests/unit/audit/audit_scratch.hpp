// SPDX-License-Identifier: Apache-2.0
// A scratch directory per test (removed afterwards) and a file writer, for
// the audit tests that build small cache trees.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace prewarm::audit::testing {

struct Scratch
{
  std::filesystem::path dir =
    std::filesystem::temp_directory_path() /
    ("prewarm-audit-" + std::to_string(::getpid()) + "-" +
     ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Scratch() { std::filesystem::create_directories(dir); }
  ~Scratch() { std::filesystem::remove_all(dir); }
};

inline void
write_file(const std::filesystem::path& path, const std::string& text)
{
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

} // namespace prewarm::audit::testing
