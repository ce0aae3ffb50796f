// SPDX-License-Identifier: Apache-2.0
// signing-archives.md §7 F: faults, atomicity, concurrency, on the real
// binary. Beyond install/'s own tests (tmpfs full, 6 installers, overlayfs):
//   - SIGKILL at every step: strace injects SIGKILL at the N-th call of each
//     syscall the installer makes (mkdir, open, write, fsync/syncfs, the
//     renames, unlink); the cache is then the old tree or the new tree, never
//     a mix, and the next install recovers;
//   - RLIMIT_FSIZE mid-extraction (EFBIG, unprivileged);
//   - a read-only root (remounted tmpfs; needs root, else skipped);
//   - 16 concurrent installers while readers check every file they see.
#include "security_support.hpp"

#include "install/install_layout.hpp"

#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

using namespace prewarm;
using namespace prewarm::security_test;

namespace {

std::string
expected_hash(const fs::path& scratch, const Files& files)
{
  const auto dir = scratch / ("expected-" + std::to_string(std::hash<std::string>{}(files.begin()->second)));
  if (!fs::exists(dir)) {
    test::write_tree(dir, files);
  }
  return test::tree_hash(dir / "pocl");
}

} // namespace

TEST_F(Security, F47_KillNineAtEveryStepThenRecover)
{
  if (!have_tool("strace")) {
    GTEST_SKIP() << "strace not installed";
  }
  // A bundle with enough files that kills land mid-extraction too.
  Files files = newer_files();
  for (int i = 0; i < 12; ++i) {
    files["pocl/dd/f" + std::to_string(i)] = std::string(3000 + i, static_cast<char>('a' + i));
  }
  const auto bundle = factory->write("kill", 2, {{"cpu", files, test::requires_cpu()}});
  const auto old_hash = expected_hash(dir.path(), baseline_files());
  const auto new_hash = expected_hash(dir.path(), files);
  ASSERT_EQ(test::tree_hash(root / "pocl"), old_hash);

  const std::vector<std::pair<std::string, std::vector<int>>> steps = {
    {"mkdir", {1, 2, 3, 5, 8}},           {"openat", {1, 5, 10, 15, 20, 25, 30, 40, 50}},
    {"write", {1, 2, 5, 10, 14, 20}},     {"fsync", {1, 2, 3, 5, 10}},
    {"syncfs", {1}},                      {"renameat2", {1, 2, 3, 4}},
    {"rename", {1, 2, 3, 4}},             {"unlink", {1, 2, 3}},
    {"unlinkat", {1, 2, 5, 10, 20}},      {"rmdir", {1, 2, 3}},
    {"flock", {1, 2}},                    {"fchmod", {1, 5}},
  };
  int killed = 0;
  int completed = 0;
  for (const auto& [syscall, whens] : steps) {
    for (const int when : whens) {
      SCOPED_TRACE(syscall + " #" + std::to_string(when));
      const auto run = run_shell(work, host_env + " strace -f -qq -o /dev/null -e trace=" + syscall +
                                         " -e inject=" + syscall + ":signal=9:when=" + std::to_string(when) +
                                         " " PREWARM_RUNTIME_BINARY " install " + bundle.string() + " --trust " +
                                         pub.string() + " --root " + root.string());
      (run.exit_code == 0 ? completed : killed) += 1;
      const auto after_kill = test::tree_hash(root / "pocl");
      EXPECT_TRUE(after_kill == old_hash || after_kill == new_hash) << "a mixed cache after the kill";
      EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
      // The next install recovers: new tree, marker, nothing stale.
      const auto again = install(bundle);
      EXPECT_EQ(again.exit_code, 0) << again.err;
      EXPECT_EQ(test::tree_hash(root / "pocl"), new_hash);
      for (const auto& entry : fs::directory_iterator(install::meta_dir(root))) {
        const auto name = entry.path().filename().string();
        EXPECT_FALSE(name.starts_with(install::k_staging_prefix)) << name;
        EXPECT_NE(name, install::k_committing_file);
      }
      // Back to the baseline for the next step.
      fs::remove_all(root);
      ASSERT_EQ(install(baseline_bundle).exit_code, 0);
    }
  }
  EXPECT_GT(killed, 30) << "the injection points must actually hit the installer";
  RecordProperty("killed", killed);
  RecordProperty("completed", completed);
}

TEST_F(Security, F57_ManyCrashesLeaveNoAccumulation)
{
  if (!have_tool("strace")) {
    GTEST_SKIP() << "strace not installed";
  }
  const auto bundle = good_bundle();
  for (int i = 1; i <= 20; ++i) {
    run_shell(work, host_env + " strace -f -qq -o /dev/null -e trace=write -e inject=write:signal=9:when=" +
                      std::to_string(1 + i % 3) + " " PREWARM_RUNTIME_BINARY " install " + bundle.string() +
                      " --trust " + pub.string() + " --root " + root.string());
  }
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(install::meta_dir(root))) {
    ++entries;
  }
  // lock, installed, manifest, files, state, and at most the last crash's
  // staging directory and committing note: not one staging per crash.
  EXPECT_LE(entries, 7) << "stale staging accumulates";
  const auto run = install(bundle);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const auto& entry : fs::directory_iterator(install::meta_dir(root))) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(install::k_staging_prefix));
  }
}

TEST_F(Security, F45_FileSizeLimitMidExtraction)
{
  Files files = newer_files();
  files["pocl/ee/big.bin"] = std::string(256 * 1024, 'x');
  const auto bundle = factory->write("fsize", 2, {{"cpu", files, test::requires_cpu()}});
  // SIGXFSZ ignored: write() fails with EFBIG instead of killing the process.
  const auto run = run_shell(work, "trap '' XFSZ; ulimit -f 64; " + host_env + " " PREWARM_RUNTIME_BINARY
                                   " install " + bundle.string() + " --trust " + pub.string() + " --root " +
                                   root.string());
  expect_refused(run, 1, "E_IO");
  const auto ok = install(bundle);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(Security, F46_ReadOnlyRoot)
{
  const auto mount_point = dir.path() / "ro";
  fs::create_directories(mount_point);
  if (::geteuid() != 0 || ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64m") != 0) {
    GTEST_SKIP() << "needs root to mount a tmpfs";
  }
  const auto ro_root = mount_point / "cache";
  const auto first = run_shell(work, host_env + " " PREWARM_RUNTIME_BINARY " install " + baseline_bundle.string() +
                                       " --trust " + pub.string() + " --root " + ro_root.string());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(::mount(nullptr, mount_point.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0);
  const auto before = test::tree_hash(ro_root);
  const auto run = run_shell(work, host_env + " " PREWARM_RUNTIME_BINARY " install " + good_bundle().string() +
                                     " --trust " + pub.string() + " --root " + ro_root.string());
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.exit_code, 3) << "a read-only disk is not an untrustworthy bundle";
  EXPECT_NE(run.err.find("E_"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("Read-only"), std::string::npos) << "names the errno: " << run.err;
  EXPECT_EQ(test::tree_hash(ro_root), before);
  const auto warned = run_shell(work, host_env + " " PREWARM_RUNTIME_BINARY " install " + good_bundle(3).string() +
                                        " --trust " + pub.string() + " --root " + ro_root.string() +
                                        " --on-failure warn");
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  ::umount2(mount_point.c_str(), MNT_DETACH);
}

TEST_F(Security, F49_SixteenInstallersWithReaders)
{
  Files files = newer_files();
  for (int i = 0; i < 40; ++i) {
    files["pocl/ff/f" + std::to_string(i)] = std::string(2000 + i, static_cast<char>('A' + i % 26));
  }
  const auto bundle = factory->write("concurrent", 2, {{"cpu", files, test::requires_cpu()}});
  const auto baseline = baseline_files();

  // Readers: every kernel.bin they open is complete, old or new.
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0};
  std::atomic<long> torn{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!stop) {
        std::ifstream in(root / "pocl/aa/kernel.bin", std::ios::binary);
        if (!in) {
          continue; // between the two renames of a swap the name may be absent for a moment
        }
        const std::string content((std::istreambuf_iterator<char>(in)), {});
        ++reads;
        if (content != baseline.at("pocl/aa/kernel.bin") && content != files.at("pocl/aa/kernel.bin")) {
          ++torn;
        }
      }
    });
  }
  std::string script;
  for (int i = 0; i < 16; ++i) {
    script += host_env + " " PREWARM_RUNTIME_BINARY " install " + bundle.string() + " --trust " + pub.string() +
              " --root " + root.string() + " >" + (work / ("out" + std::to_string(i))).string() + " 2>&1; echo $? >" +
              (work / ("rc" + std::to_string(i))).string() + " &\n";
  }
  script += "wait\n";
  write_text(work / "many.sh", script);
  const auto run = run_shell(work, "sh " + (work / "many.sh").string());
  stop = true;
  for (auto& t : readers) {
    t.join();
  }
  int installed = 0;
  int already = 0;
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(slurp(work / ("rc" + std::to_string(i))), "0\n") << slurp(work / ("out" + std::to_string(i)));
    const auto out = slurp(work / ("out" + std::to_string(i)));
    installed += out.find("installed: channel") != std::string::npos && out.find("already installed") == std::string::npos ? 1 : 0;
    already += out.find("already installed") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(installed, 1);
  EXPECT_EQ(already, 15);
  EXPECT_EQ(torn.load(), 0) << "a reader saw a partial file";
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(test::tree_hash(root / "pocl"), expected_hash(dir.path(), files));
  RecordProperty("reads", static_cast<int>(reads.load()));
}
