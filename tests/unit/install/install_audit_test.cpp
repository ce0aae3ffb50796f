// SPDX-License-Identifier: Apache-2.0
// The audit since install against the states the install's file list
// records (install/install_audit.hpp, audit/file_inventory.hpp format 3), on
// a real signed bundle installed by the real installer.
#include "install_test_support.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"
#include "install/install_audit.hpp"
#include "install/install_layout.hpp"
#include "install/installer.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

using namespace prewarm;
using namespace prewarm::test;

namespace {

class InstallAuditTest : public ::testing::Test
{
protected:
  TempDir dir = scratch();
  BundleFactory factory{dir.path()};
  fs::path root = dir.path() / "root";
  fs::path version;

  void SetUp() override
  {
    const auto bundle = factory.write(
      "b1", 1,
      {{"cpu", {{"pocl/ab/kernel.bin", "pocl kernel"}, {"pocl/ab/kernel.meta", "meta"}, {"pocl/cd/other.bin", "x"}},
        requires_cpu()}});
    auto report = install::install_bundle(bundle, factory.trust(), root, cpu_host(), {});
    ASSERT_TRUE(report) << report.error().message();
    version = install::versions_dir(root) / report->version;
  }

  // Rewrites a file as a later run would: its mtime moves.
  void rewrite(const std::string& relative, const std::string& bytes)
  {
    const auto path = version / "pocl" / relative;
    std::ofstream(path, std::ios::trunc) << bytes;
    fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(3));
  }

  const audit::KindUsage& pocl_since_install(install::InstallAudit& holder) { return pocl_since_install(holder, root); }

  const audit::KindUsage& pocl_since_install(install::InstallAudit& holder, const fs::path& at)
  {
    auto baseline = install::read_audit_baseline(at);
    EXPECT_TRUE(baseline) << baseline.error().message();
    auto made = install::audit_install(*baseline, nullptr, "");
    EXPECT_TRUE(made) << made.error().message();
    holder = std::move(*made);
    const auto* usage = holder.usage.find("pocl");
    EXPECT_NE(usage, nullptr);
    return *usage;
  }
};

} // namespace

TEST_F(InstallAuditTest, ListRecordsTheManifestDigestSizeMtimeAndInode)
{
  auto baseline = install::read_audit_baseline(root);
  ASSERT_TRUE(baseline) << baseline.error().message();
  EXPECT_TRUE(baseline->from_install);
  const auto& states = baseline->install_states.at("pocl");
  ASSERT_EQ(states.size(), 3u);
  const auto& kernel = states.at("ab/kernel.bin");
  EXPECT_EQ(kernel.sha256, sha256_hex("pocl kernel"));
  EXPECT_EQ(kernel.size, 11u);
  struct stat st{};
  ASSERT_EQ(::stat((version / "pocl/ab/kernel.bin").c_str(), &st), 0);
  EXPECT_EQ(kernel.mtime_ns, std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec);
  EXPECT_EQ(kernel.inode, std::uint64_t{st.st_ino}) << "the published file is the one listed";
}

TEST_F(InstallAuditTest, FileRewrittenWithOtherBytesIsNewAndRewritten)
{
  install::InstallAudit holder;
  EXPECT_EQ(pocl_since_install(holder).new_files, 0u);

  rewrite("ab/kernel.bin", "POCL KERNEL"); // same size, other bytes
  const auto& usage = pocl_since_install(holder);
  EXPECT_EQ(usage.new_files, 1u);
  EXPECT_EQ(usage.rewritten_files, 1u);
  EXPECT_EQ(usage.new_file_paths, std::vector<std::string>{"ab/kernel.bin"});
  EXPECT_NE(usage.summary().find("1 new (1 rewritten)"), std::string::npos) << usage.summary();
}

// A rebuilt entry is never reused, whatever its bytes: truncated and
// rewritten in place, or unlinked and created again (onnxruntime-openvino's
// blob on the CPU), it is new since install, as the proof and this run say.
TEST_F(InstallAuditTest, FileRewrittenWithTheSameBytesIsNewSinceInstall)
{
  rewrite("ab/kernel.bin", "pocl kernel");
  const auto other = version / "pocl/cd/other.bin";
  fs::remove(other);
  std::ofstream(other) << "x";
  fs::last_write_time(other, fs::last_write_time(other) + std::chrono::seconds(3)); // a later run
  install::InstallAudit holder;
  const auto& usage = pocl_since_install(holder);
  EXPECT_EQ(usage.rewritten_files, 2u) << usage.summary();
}

// The root copied with its times, as an image layer or a volume filled from
// another is (cp -a; tar, whose default format keeps whole seconds): every
// file has another inode and the same bytes, and nothing was compiled since
// install. A file of the copy written again is still new.
TEST_F(InstallAuditTest, RootCopiedWithItsTimesIsTheInstalledFiles)
{
  const std::vector<std::pair<std::string, std::string>> copies = {
    {"cp-a", "cp -a '" + root.string() + "' '" + (dir.path() / "cp-a").string() + "'"},
    {"tar", "mkdir '" + (dir.path() / "tar").string() + "' && tar -C '" + root.string() + "' -cf - . | tar -C '" +
              (dir.path() / "tar").string() + "' -xf -"}};
  for (const auto& [name, command] : copies) {
    SCOPED_TRACE(name);
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    const auto copy = dir.path() / name;
    const auto copied_kernel = copy / fs::relative(version, root) / "pocl/ab/kernel.bin";
    struct stat original = {};
    struct stat copied = {};
    ASSERT_EQ(::stat((version / "pocl/ab/kernel.bin").c_str(), &original), 0);
    ASSERT_EQ(::stat(copied_kernel.c_str(), &copied), 0);
    ASSERT_NE(original.st_ino, copied.st_ino);
    install::InstallAudit holder;
    const auto& usage = pocl_since_install(holder, copy);
    EXPECT_EQ(usage.new_files, 0u) << usage.summary();

    std::ofstream(copied_kernel, std::ios::trunc) << "pocl kernel";
    fs::last_write_time(copied_kernel, fs::last_write_time(copied_kernel) + std::chrono::seconds(3));
    install::InstallAudit after_rewrite;
    EXPECT_EQ(pocl_since_install(after_rewrite, copy).rewritten_files, 1u);
  }
}

// exec --audit's since-install part: a file an earlier run rewrote counts as
// new since install though this run only read it; this run's own count does
// not (its start state is the rewritten file).
TEST_F(InstallAuditTest, WatchedRunCountsAnEarlierRewriteSinceInstall)
{
  rewrite("ab/kernel.bin", "POCL KERNEL");
  auto baseline = install::read_audit_baseline(root);
  ASSERT_TRUE(baseline) << baseline.error().message();
  ASSERT_TRUE(install::take_run_start(*baseline));
  audit::AccessRecord access;
  access.kinds["pocl"].opened = {"ab/kernel.bin", "ab/kernel.meta"};
  auto made = install::audit_install(*baseline, &access, "");
  ASSERT_TRUE(made) << made.error().message();
  const auto* since_install = made->usage.find("pocl");
  ASSERT_NE(since_install, nullptr);
  EXPECT_EQ(since_install->new_files, 1u);
  EXPECT_EQ(since_install->rewritten_files, 1u);
  EXPECT_EQ(since_install->reused_files, 1u);
  ASSERT_TRUE(made->run);
  const auto* this_run = made->run->find("pocl");
  ASSERT_NE(this_run, nullptr);
  EXPECT_EQ(this_run->new_files, 0u);
  EXPECT_EQ(this_run->reused_files, 2u);
}

// An install made before lists held states: read as before, a rewrite is not
// seen, a file added still is.
TEST_F(InstallAuditTest, OldFormatListStillWorksWithoutStates)
{
  ASSERT_TRUE(write_file_atomic(version / install::k_version_files_file,
                                "prewarm-files 1\npocl ab/kernel.bin\npocl ab/kernel.meta\npocl cd/other.bin\n"));
  rewrite("ab/kernel.bin", "POCL KERNEL");
  fs::create_directories(version / "pocl/ef");
  std::ofstream(version / "pocl/ef/added.bin") << "new";
  install::InstallAudit holder;
  const auto& usage = pocl_since_install(holder);
  EXPECT_TRUE(holder.from_install);
  EXPECT_EQ(usage.new_files, 1u);
  EXPECT_EQ(usage.rewritten_files, 0u);
  EXPECT_EQ(usage.new_file_paths, std::vector<std::string>{"ef/added.bin"});
}
