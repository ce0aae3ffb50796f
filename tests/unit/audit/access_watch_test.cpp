// SPDX-License-Identifier: Apache-2.0
// The watcher on real files: reads, writes, directories created during the
// run, and opens by another process.
#include "audit/access_watch.hpp"

#include "audit_scratch.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace prewarm::audit;
using prewarm::audit::testing::Scratch;
using prewarm::audit::testing::write_file;

namespace {
std::string
read(const fs::path& p)
{
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
} // namespace

TEST(AccessWatch, SeesReadsWritesAndNewDirectories)
{
  Scratch s;
  write_file(s.dir / "pocl/ab/cd/program.bc", "bc");
  write_file(s.dir / "pocl/ab/cd/unused.so", "so");
  auto watch = AccessWatch::start({{"pocl", s.dir / "pocl"}, {"absent", s.dir / "absent"}});
  ASSERT_TRUE(watch.has_value()) << watch.error().describe();
  EXPECT_EQ(read(s.dir / "pocl/ab/cd/program.bc"), "bc");
  write_file(s.dir / "pocl/ef/gh/new/1-1-1/new.so", "so");
  write_file(s.dir / "pocl/ab/cd/program.bc", "rewritten");
  const auto record = (*watch)->stop();
  EXPECT_TRUE(record.complete);
  const auto& pocl = record.kinds.at("pocl");
  EXPECT_TRUE(pocl.opened.contains("ab/cd/program.bc"));
  EXPECT_FALSE(pocl.opened.contains("ab/cd/unused.so"));
  EXPECT_TRUE(pocl.written.contains("ab/cd/program.bc"));
  EXPECT_TRUE(pocl.written.contains("ef/gh/new/1-1-1/new.so"));
  EXPECT_TRUE(record.kinds.contains("absent"));
}

TEST(AccessWatch, SeesOpensByAnotherProcess)
{
  Scratch s;
  write_file(s.dir / "k/a", "a");
  write_file(s.dir / "k/b", "b");
  auto watch = AccessWatch::start({{"k", s.dir / "k"}});
  ASSERT_TRUE(watch.has_value());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const auto path = (s.dir / "k/b").string();
    ::execlp("cat", "cat", path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto record = (*watch)->stop();
  EXPECT_EQ(record.kinds.at("k").opened, (FileSet{"b"}));
  EXPECT_TRUE(record.kinds.at("k").written.empty());
}
