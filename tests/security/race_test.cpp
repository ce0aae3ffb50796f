// SPDX-License-Identifier: Apache-2.0
// signing-archives.md §7 F, the racing cases, on the real binary:
//   51  an attacker with the installer's uid loops rename(staging subdir) +
//       symlink(outside) while installs run: nothing is ever written outside,
//       every run installs or is refused, and a later clean run recovers;
//   52  the payload is changed between the hash and the parse, triggered by
//       inotify on the hash's first read (strace slows the hash so the change
//       lands inside it): the intruder's bytes of a file renamed over the
//       payload path are never read (the installer keeps its fd; the unlink
//       moves the old inode's ctime, so the reader refuses E_PAYLOAD_CHANGED);
//       a write or truncate of the same inode is E_PAYLOAD_CHANGED; the cache
//       is untouched each time;
//   54  openat2 blocked by a seccomp filter (EPERM, then ENOSYS): all of group
//       D still passes. (The runtime never calls openat2: its fd-relative
//       O_NOFOLLOW walk is the only path, so this proves that a sandbox which
//       blocks openat2 changes nothing.)
#include "security_support.hpp"

#include "bundle/bundle_files.hpp"
#include "install/install_layout.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <random>
#include <set>
#include <thread>

using namespace prewarm;
using namespace prewarm::security_test;

namespace {

std::string
random_bytes(std::size_t size, unsigned seed)
{
  std::mt19937 rng(seed);
  std::string bytes(size, '\0');
  for (auto& c : bytes) {
    c = static_cast<char>(rng() & 0xff);
  }
  return bytes;
}

std::string
expected_tree_hash(const fs::path& scratch, const std::string& name, const Files& files)
{
  const auto dir = scratch / ("expected-" + name);
  test::write_tree(dir, files);
  return test::tree_hash(dir / "pocl");
}

// Runs `action` once, right after the first read of `watched` (IN_ACCESS),
// from a thread; `run` is the install. Returns whether the action ran.
bool
on_first_read(const fs::path& watched, const std::function<void()>& action, const std::function<void()>& run)
{
  const int in = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  EXPECT_GE(in, 0);
  EXPECT_GE(::inotify_add_watch(in, watched.c_str(), IN_ACCESS), 0);
  std::atomic<bool> done{false};
  std::atomic<bool> acted{false};
  std::thread watcher([&] {
    while (!done) {
      pollfd p{in, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) {
        action();
        acted = true;
        return;
      }
    }
  });
  run();
  done = true;
  watcher.join();
  ::close(in);
  return acted;
}

} // namespace

// ------------------------------------------------------------------------ 52

class PayloadSwap : public Security
{
protected:
  // 3 MiB of incompressible data: the hash takes three 1 MiB preads, each
  // after the first delayed 300 ms by strace, so a change made on the first
  // read's inotify event lands inside the hash.
  fs::path big_bundle(const std::string& name, unsigned seed, std::uint64_t serial = 2)
  {
    files = {{"pocl/big/blob.bin", random_bytes(3 << 20, seed)}, {"pocl/aa/kernel.bin", "kernel " + name}};
    return factory->write(name, serial, {{"cpu", files, test::requires_cpu()}});
  }

  Outcome slow_hash_install(const fs::path& bundle)
  {
    return run_shell(work, host_env + " strace -f -qq -o /dev/null -e trace=pread64 -e inject=pread64:delay_enter=300000:when=2+ "
                                 PREWARM_RUNTIME_BINARY " install " + bundle.string() + " --trust " + pub.string() +
                                 " --root " + root.string());
  }

  Files files;
};

TEST_F(PayloadSwap, F52_FileRenamedOverThePayloadPathIsNeverRead)
{
  if (!have_tool("strace")) {
    GTEST_SKIP() << "strace not installed";
  }
  const auto bundle = big_bundle("swap", 1);
  const auto want = expected_tree_hash(dir.path(), "swap", files);
  // Another validly signed payload of the same shape: same size, other bytes.
  const auto other = big_bundle("other", 2, 3);
  const auto payload = bundle::slice_payload_path(bundle, "cpu");
  const auto intruder = bundle::slice_payload_path(other, "cpu");
  Outcome run;
  const bool acted = on_first_read(
    payload, [&] { EXPECT_EQ(::rename(intruder.c_str(), payload.c_str()), 0) << errno; },
    [&] { run = slow_hash_install(bundle); });
  ASSERT_TRUE(acted) << "the payload was never read";
  EXPECT_FALSE(fs::exists(intruder)) << "the rename did not happen";
  // The intruder's bytes are never installed: the installer reads only the
  // fd it opened. The rename unlinks that inode, which moves its ctime, and
  // the reader's fstat re-check cannot tell an unlink from a write whose
  // mtime was put back, so it refuses: E_PAYLOAD_CHANGED, cache untouched.
  // (Were it to accept, the tree would be the hashed payload's: `want`.)
  if (run.exit_code == 0) {
    EXPECT_EQ(test::tree_hash(root / "pocl"), want);
    EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
  } else {
    expect_refused(run, 3, "E_PAYLOAD_CHANGED");
  }
  EXPECT_EQ(run.exit_code, 3) << "the reader's current rule: any ctime change is a change";
}

TEST_F(PayloadSwap, F52_SameInodeWrittenDuringTheHashIsPayloadChanged)
{
  if (!have_tool("strace")) {
    GTEST_SKIP() << "strace not installed";
  }
  const auto bundle = big_bundle("write", 3);
  const auto payload = bundle::slice_payload_path(bundle, "cpu");
  Outcome run;
  const bool acted = on_first_read(
    payload,
    [&] {
      // Flip one byte in the part not hashed yet, through another descriptor.
      const int fd = ::open(payload.c_str(), O_RDWR | O_CLOEXEC);
      ASSERT_GE(fd, 0);
      char byte = 0;
      ASSERT_EQ(::pread(fd, &byte, 1, 2 << 20), 1);
      byte = static_cast<char>(byte ^ 0x5a);
      EXPECT_EQ(::pwrite(fd, &byte, 1, 2 << 20), 1);
      ::close(fd);
    },
    [&] { run = slow_hash_install(bundle); });
  ASSERT_TRUE(acted);
  expect_refused(run, 3, "E_PAYLOAD_CHANGED");
}

TEST_F(PayloadSwap, F52_SameInodeTruncatedDuringTheHashIsPayloadChanged)
{
  if (!have_tool("strace")) {
    GTEST_SKIP() << "strace not installed";
  }
  const auto bundle = big_bundle("truncate", 4);
  const auto payload = bundle::slice_payload_path(bundle, "cpu");
  Outcome run;
  const bool acted = on_first_read(
    payload, [&] { EXPECT_EQ(::truncate(payload.c_str(), 1 << 20), 0) << errno; },
    [&] { run = slow_hash_install(bundle); });
  ASSERT_TRUE(acted);
  expect_refused(run, 3, "E_PAYLOAD_CHANGED");
}

// ------------------------------------------------------------------------ 51

TEST_F(Security, F51_RacingAttackerSwapsStagingDirectoriesForSymlinks)
{
  // Bundles with many directories, so the installer spends its time creating
  // entries beneath staging while the attacker works there.
  std::vector<fs::path> bundles;
  for (int b = 0; b < 6; ++b) {
    Files files;
    for (int d = 0; d < 40; ++d) {
      for (int f = 0; f < 4; ++f) {
        files["pocl/d" + std::to_string(d) + "/s" + std::to_string(f) + "/k.bin"] =
          std::string(4000 + d * 10 + f, static_cast<char>('a' + (b + d + f) % 26));
      }
    }
    bundles.push_back(factory->write("race-" + std::to_string(b), 2 + b, {{"cpu", files, test::requires_cpu()}}));
  }
  const auto meta = install::meta_dir(root);
  const auto sentinel = outside / "victim";
  std::atomic<bool> stop{false};
  std::atomic<int> swaps{0};
  // The live cache and its records (staging is the attacker's playground:
  // walking it while it changes is not a meaningful hash).
  const auto cache_hash = [&] {
    return test::tree_hash(root / "pocl") + slurp(meta / install::k_marker_file) + slurp(meta / install::k_state_file);
  };
  // Same uid as the installer: it may rename and create anything in staging.
  std::thread attacker([&] {
    std::error_code ec;
    while (!stop) {
      for (fs::directory_iterator it(meta, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        if (!it->path().filename().string().starts_with(install::k_staging_prefix)) {
          continue;
        }
        const auto kind = it->path() / "pocl";
        if (fs::is_symlink(fs::symlink_status(kind, ec))) {
          continue; // its own work: never walk through its own links
        }
        for (fs::directory_iterator sub(kind, ec); !ec && sub != fs::directory_iterator(); sub.increment(ec)) {
          const auto victim = sub->path();
          if (victim.filename().string().starts_with("moved") || sub->is_symlink(ec)) {
            continue;
          }
          const auto moved = kind / ("moved-" + std::to_string(swaps.load()));
          if (::rename(victim.c_str(), moved.c_str()) == 0 && ::symlink(sentinel.c_str(), victim.c_str()) == 0) {
            ++swaps;
          }
        }
        ec.clear();
        // The kind directory itself too.
        const auto moved_kind = it->path() / ("moved-kind-" + std::to_string(swaps.load()));
        if (::rename(kind.c_str(), moved_kind.c_str()) == 0 && ::symlink(outside.c_str(), kind.c_str()) == 0) {
          ++swaps;
        }
      }
      ec.clear();
    }
  });
  struct StopAttacker
  {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~StopAttacker()
    {
      stop = true;
      if (thread.joinable()) {
        thread.join();
      }
    }
  } stop_attacker{stop, attacker};
  std::set<int> outcomes;
  for (const auto& bundle : bundles) {
    const auto before = cache_hash();
    const auto run = install(bundle);
    outcomes.insert(run.exit_code);
    SCOPED_TRACE(run.err);
    // Installed, or refused with a named error (a path that turned into a
    // symlink under the installer: E_PATH/E_DUPLICATE/E_TARGET_UNSAFE; one
    // that vanished: E_IO); never anything else.
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1 || run.exit_code == 3);
    if (run.exit_code != 0) {
      EXPECT_TRUE(run.err.find("E_PATH") != std::string::npos || run.err.find("E_DUPLICATE") != std::string::npos ||
                  run.err.find("E_TARGET_UNSAFE") != std::string::npos || run.err.find("E_IO") != std::string::npos ||
                  run.err.find("E_ENTRY_MISSING") != std::string::npos);
      EXPECT_EQ(cache_hash(), before) << "a refused install changed the cache";
    }
    EXPECT_EQ(test::tree_hash(outside), outside_hash_before) << "written outside the root";
  }
  stop = true;
  attacker.join();
  std::string codes;
  for (const int code : outcomes) {
    codes += (codes.empty() ? "" : ",") + std::to_string(code);
  }
  RecordProperty("exit_codes", codes);
  RecordProperty("swaps", swaps.load());
  EXPECT_GT(swaps.load(), 0) << "the attacker never got a swap in: the race was not exercised";
  EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
  // Without the attacker: a newer bundle installs, and nothing is left behind.
  fs::remove_all(root / "pocl"); // it may be the attacker's symlink now (a later install refuses that: D56)
  const auto clean = install(good_bundle(20));
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  for (const auto& entry : fs::directory_iterator(meta)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(install::k_staging_prefix)) << entry.path();
  }
  EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
}

// ------------------------------------------------------------------------ 54

TEST_F(Security, F54_Openat2BlockedBySeccompGroupDStillPasses)
{
  for (const int error_number : {EPERM, ENOSYS}) {
    SCOPED_TRACE(error_number == EPERM ? "EPERM" : "ENOSYS");
    openat2_errno = error_number;
    // The filter is really in place (run_shell exits 99 otherwise).
    const auto probe = install(baseline_bundle);
    ASSERT_EQ(probe.exit_code, 0) << "seccomp filter not installed or install failed: " << probe.err;
    evil_archive_cases();
  }
}
