// SPDX-License-Identifier: Apache-2.0
// The one copy, re-run and count every hit proof uses (command/proof_rerun.hpp),
// with a re-run written in C++: what it reads is reused, what it writes or
// rewrites with other bytes is new, bookkeeping is neither; the staged files
// are never touched.
#include "command/proof_rerun.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
using namespace prewarm;
using namespace prewarm::command;

namespace {

struct Scratch
{
  fs::path dir = fs::temp_directory_path() / fs::path("prewarm-proof-rerun-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Scratch() { fs::create_directories(dir); }
  ~Scratch()
  {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

void
write(const fs::path& p, const std::string& text)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string
read(const fs::path& p)
{
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool
writable_by_owner(const fs::path& p)
{
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && (st.st_mode & S_IWUSR) != 0;
}

} // namespace

TEST(ProofRerun, ReadIsReusedWrittenIsNewAndTheStagedFilesStay)
{
  Scratch s;
  write(s.dir / "staged" / "neo" / "a.cl_cache", "program a");
  write(s.dir / "staged" / "neo" / "b.cl_cache", "program b");
  write(s.dir / "staged" / "neo" / "config.file", "size");
  const ProofCache neo{"neo", s.dir / "staged" / "neo", s.dir / "proof" / "neo"};
  fs::path seen;
  const auto usage = rerun_on_copies({neo}, [&](const ProofCopies& copies) -> Status {
    seen = copies.dirs.at("neo");
    EXPECT_EQ(copies.before.at("neo").size(), 3u);
    EXPECT_EQ(read(seen / "a.cl_cache"), "program a");
    write(seen / "c.cl_cache", "program c");
    write(seen / "config.file", "other size"); // bookkeeping: neither reused nor new
    return {};
  });
  ASSERT_TRUE(usage.has_value()) << usage.error().describe();
  EXPECT_EQ(seen, s.dir / "proof" / "neo");
  ASSERT_EQ(usage->kinds.size(), 1u);
  const auto& k = usage->kinds.front();
  EXPECT_EQ(k.reused_files, 1u);
  EXPECT_EQ(k.new_files, 1u);
  EXPECT_EQ(new_entries(*usage, "neo"), 1u);
  EXPECT_EQ(new_entries(*usage, "sycl"), 0u);
  EXPECT_EQ(new_entries(*usage), 1u);
  EXPECT_EQ(first_new_entry(*usage), "neo/c.cl_cache");
  EXPECT_FALSE(fs::exists(s.dir / "staged" / "neo" / "c.cl_cache")) << "the re-run wrote into the staged files";
  EXPECT_EQ(read(s.dir / "staged" / "neo" / "config.file"), "size");
}

TEST(ProofRerun, AnEntryRebuiltInPlaceWithOtherBytesIsNew)
{
  Scratch s;
  write(s.dir / "staged" / "neo" / "a.cl_cache", "program a");
  const auto usage = rerun_on_copies({{"neo", s.dir / "staged" / "neo", s.dir / "proof" / "neo"}},
                                     [&](const ProofCopies& copies) -> Status {
                                       write(copies.dirs.at("neo") / "a.cl_cache", "program a, rebuilt");
                                       return {};
                                     });
  ASSERT_TRUE(usage.has_value()) << usage.error().describe();
  EXPECT_EQ(new_entries(*usage, "neo"), 1u);
  EXPECT_EQ(first_new_entry(*usage), "neo/a.cl_cache");
}

TEST(ProofRerun, AMissingCaptureIsAnEmptyCopyAndAnUntouchedOneIsLeftOut)
{
  Scratch s;
  write(s.dir / "staged" / "neo" / "a.cl_cache", "program a");
  const auto usage = rerun_on_copies({{"neo", s.dir / "staged" / "neo", s.dir / "proof" / "neo"},
                                      {"sycl", s.dir / "staged" / "sycl", s.dir / "proof" / "sycl"}},
                                     [&](const ProofCopies& copies) -> Status {
                                       EXPECT_TRUE(fs::is_directory(copies.dirs.at("sycl")));
                                       return {};
                                     });
  ASSERT_TRUE(usage.has_value()) << usage.error().describe();
  EXPECT_EQ(usage->find("sycl"), nullptr) << "a cache that held and gained nothing is not reported";
  EXPECT_EQ(first_new_entry(*usage), std::nullopt);
}

TEST(ProofRerun, AFailedRerunIsAnError)
{
  Scratch s;
  write(s.dir / "staged" / "neo" / "a.cl_cache", "program a");
  const auto usage = rerun_on_copies({{"neo", s.dir / "staged" / "neo", s.dir / "proof" / "neo"}},
                                     [](const ProofCopies&) -> Status { return fail(Errc::failed, "test_only"); });
  ASSERT_FALSE(usage.has_value());
  EXPECT_EQ(usage.error().message(), "test_only");
}

TEST(ProofRerun, ReadOnlyCopiesKeepBookkeepingWritable)
{
  Scratch s;
  write(s.dir / "staged" / "pocl" / "kernels" / "program.bc", "bitcode");
  write(s.dir / "staged" / "pocl" / "kernels" / "last_accessed", "0");
  const ProofCache pocl{"pocl", s.dir / "staged" / "pocl", s.dir / "proof" / "pocl", ProofFiles::read_only};
  ASSERT_TRUE(make_proof_copy(pocl));
  EXPECT_FALSE(writable_by_owner(pocl.copy / "kernels" / "program.bc"));
  EXPECT_TRUE(writable_by_owner(pocl.copy / "kernels" / "last_accessed"));
  EXPECT_TRUE(writable_by_owner(pocl.captured / "kernels" / "program.bc")) << "the staged file changed mode";

  const ProofCache custom{"custom/jax", s.dir / "staged" / "pocl", s.dir / "proof" / "custom" / "jax"};
  ASSERT_TRUE(make_proof_copy(custom));
  EXPECT_TRUE(writable_by_owner(custom.copy / "kernels" / "program.bc")) << "as_copied stays writable";
}
