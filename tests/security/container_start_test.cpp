// SPDX-License-Identifier: Apache-2.0
// Container start never hangs and never dies: the defects an adversarial run
// found, one test each, on the real prewarm-runtime binary.
//   - a FIFO (or a directory, socket, symlink, device) in place of any file
//     the runtime opens: no open(2) waits for a writer; exec still starts
//     the application;
//   - no thread can be created (pthread_create fails with EAGAIN, as under
//     a pids limit): the install does the work on its own thread;
//   - a duplicated key in the trust policy is refused with file:line;
//   - a kill at the switch of a two-kind install: one bundle (old before
//     the marker's rename, new after it), both kinds of it through exec,
//     nothing for status to report, the next install completes;
//   - a read-only root that already holds the bundle: "already installed";
//   - a corrupt or empty marker: reinstalled, said so; the state file stays
//     strict;
//   - control bytes of a tar entry name are escaped in messages;
//   - a huge --clock-skew / max_clock_skew is a usage error naming it.
#include "security_support.hpp"

#include "bundle/bundle_files.hpp"
#include "bundle_test_support.hpp"
#include "install/install_layout.hpp"

#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

using namespace prewarm;
using namespace prewarm::security_test;

namespace {

constexpr const char* k_token = "test_only_application_started";

// What replaces a file the runtime opens.
enum class Plant { fifo, directory, symlink, socket, device };

const char*
plant_name(Plant plant)
{
  switch (plant) {
  case Plant::fifo: return "FIFO";
  case Plant::directory: return "directory";
  case Plant::symlink: return "symlink";
  case Plant::socket: return "socket";
  case Plant::device: return "device";
  }
  return "?";
}

// Replaces `path` (whatever it was) by `plant`; false when this process may
// not make one (a device node needs root).
bool
plant_at(const fs::path& path, Plant plant, const fs::path& symlink_target)
{
  fs::remove_all(path);
  fs::create_directories(path.parent_path());
  switch (plant) {
  case Plant::fifo:
    return ::mkfifo(path.c_str(), 0644) == 0;
  case Plant::directory:
    return fs::create_directory(path);
  case Plant::symlink:
    return ::symlink(symlink_target.c_str(), path.c_str()) == 0;
  case Plant::socket: {
    // A bound socket stays as a name in the file system after close.
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.string().size() >= sizeof address.sun_path) {
      return false;
    }
    std::strcpy(address.sun_path, path.c_str());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    const bool bound = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    if (fd >= 0) {
      ::close(fd);
    }
    return bound;
  }
  case Plant::device:
    return ::geteuid() == 0 && ::mknod(path.c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0; // like /dev/zero
  }
  return false;
}

} // namespace

class ContainerStart : public Security
{
protected:
  // Every command a container start runs, each under `timeout`: none may
  // hang (exit 124) or crash (a signal: exit > 128), exec must start the
  // application, install --on-failure warn must exit 0.
  void expect_container_starts(const fs::path& bundle, const fs::path& trust, const std::string& what)
  {
    SCOPED_TRACE(what);
    const std::string rt = std::string("timeout -s KILL 20 ") + PREWARM_RUNTIME_BINARY;
    const std::string env = host_env + " ";
    const std::string root_arg = " --root " + root.string();
    const std::string trust_arg = " --trust " + trust.string();
    const std::vector<std::pair<std::string, std::string>> steps = {
      {"verify", env + rt + " verify " + bundle.string() + trust_arg},
      {"install", env + rt + " install " + bundle.string() + trust_arg + root_arg},
      {"install warn", env + rt + " install " + bundle.string() + trust_arg + root_arg + " --on-failure warn"},
      {"status", env + rt + " status" + root_arg},
      {"env", env + rt + " env" + root_arg},
      {"exec", env + rt + " exec" + root_arg + " -- echo " + k_token},
    };
    for (const auto& [name, command] : steps) {
      const auto run = run_shell(work, command);
      EXPECT_NE(run.exit_code, 124) << name << " hung (killed by timeout)";
      EXPECT_NE(run.exit_code, 137) << name << " hung (killed by timeout)";
      EXPECT_GE(run.exit_code, 0) << name << " died of a signal";
      EXPECT_LE(run.exit_code, 4) << name << ": " << run.err;
      if (name == "install warn") {
        EXPECT_EQ(run.exit_code, 0) << run.err;
      }
      if (name == "exec") {
        EXPECT_EQ(run.exit_code, 0) << run.err;
        EXPECT_EQ(run.out, std::string(k_token) + "\n") << run.err;
      }
    }
  }
};

TEST_F(ContainerStart, NoFileTheRuntimeOpensCanHangOrCrashIt)
{
  const auto good = good_bundle();
  const auto meta = install::meta_dir(root);
  const auto fresh_root = [&] {
    fs::remove_all(root);
    ASSERT_EQ(install(baseline_bundle).exit_code, 0);
  };
  // The policy's key file is opened too (relative to the policy).
  const auto key_policy = policy("", "policy.yaml");
  int cases = 0;
  int skipped = 0;
  for (const auto plant : {Plant::fifo, Plant::directory, Plant::symlink, Plant::socket, Plant::device}) {
    const std::vector<std::pair<std::string, std::function<fs::path(const fs::path&)>>> targets = {
      {"manifest", [](const fs::path& b) { return b / bundle::k_manifest_file; }},
      {"manifest.sig", [](const fs::path& b) { return b / bundle::k_signature_file; }},
      {"slice", [](const fs::path& b) { return bundle::slice_payload_path(b, "cpu"); }},
      {"ROOT/.prewarm/installed", [&](const fs::path&) { return meta / install::k_marker_file; }},
      {"ROOT/.prewarm/state", [&](const fs::path&) { return meta / install::k_state_file; }},
      {"ROOT/.prewarm/manifest", [&](const fs::path&) { return meta / install::k_manifest_copy_file; }},
      {"ROOT/.prewarm/lock", [&](const fs::path&) { return meta / install::k_lock_file; }},
      {"ROOT/.prewarm/committing", [&](const fs::path&) { return meta / install::k_committing_file; }},
    };
    for (const auto& [name, where] : targets) {
      const auto bundle = copy_bundle(good, std::string("plant-") + plant_name(plant) + "-" + std::to_string(cases));
      const auto path = where(bundle);
      if (!plant_at(path, plant, "/dev/zero")) {
        ++skipped; // a device node needs root
        continue;
      }
      ++cases;
      expect_container_starts(bundle, pub, std::string(plant_name(plant)) + " as " + name);
      fresh_root();
    }
    // The trust file itself, and a key file a policy names.
    const auto planted_pub = dir.path() / (std::string("planted-") + plant_name(plant) + ".pub");
    if (plant_at(planted_pub, plant, "/dev/zero")) {
      ++cases;
      expect_container_starts(good, planted_pub, std::string(plant_name(plant)) + " as --trust");
      fresh_root();
      const auto planted_key = dir.path() / "test_only_planted.pub";
      ASSERT_TRUE(plant_at(planted_key, plant, "/dev/zero"));
      const auto fifo_policy = policy("", "policy-planted.yaml");
      write_text(fifo_policy, "version: 1\nkeys:\n  - file: test_only_planted.pub\n");
      ++cases;
      expect_container_starts(good, fifo_policy, std::string(plant_name(plant)) + " as a policy's key file");
      fresh_root();
    }
  }
  // The host description the tests point the runtime at (PREWARM_HOST_DEVICES).
  const auto saved_env = host_env;
  const auto host_fifo = dir.path() / "host-fifo.json";
  ASSERT_TRUE(plant_at(host_fifo, Plant::fifo, {}));
  host_env = "PREWARM_HOST_DEVICES=" + host_fifo.string();
  expect_container_starts(good, key_policy, "FIFO as PREWARM_HOST_DEVICES");
  host_env = saved_env;
  RecordProperty("cases", cases);
  RecordProperty("skipped", skipped);
  EXPECT_GE(cases, 4 * 10);
}

TEST_F(ContainerStart, FifoSliceDoesNotHoldTheLockFromTheNextInstaller)
{
  const auto bundle = copy_bundle(good_bundle(), "fifo-slice");
  ASSERT_TRUE(plant_at(bundle::slice_payload_path(bundle, "cpu"), Plant::fifo, {}));
  const auto first = run_shell(work, host_env + " timeout -s KILL 20 " PREWARM_RUNTIME_BINARY " install " +
                                       bundle.string() + " --trust " + pub.string() + " --root " + root.string());
  EXPECT_EQ(first.exit_code, 3) << first.err;
  EXPECT_NE(first.err.find("E_NOT_REGULAR"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("a FIFO"), std::string::npos) << "names what the file is: " << first.err;
  const auto next = install(good_bundle(3), "--lock-timeout 2s");
  EXPECT_EQ(next.exit_code, 0) << next.err;
}

TEST_F(ContainerStart, InstallWorksWhenNoThreadCanBeCreated)
{
  Files files = newer_files();
  for (int i = 0; i < 40; ++i) {
    files["pocl/dd/f" + std::to_string(i)] = std::string(3000 + i, static_cast<char>('a' + i % 26));
  }
  const auto bundle = factory->write("nothreads", 2, {{"cpu", files, test::requires_cpu()}});
  const auto preload = std::string("LD_PRELOAD=") + PREWARM_NO_THREADS_PRELOAD + " ";
  // The shim works: a program that needs a thread fails.
  const auto probe = run_shell(work, preload + "sh -c 'echo ok'");
  ASSERT_EQ(probe.exit_code, 0) << "the shim must not break single-threaded programs";
  for (const auto* mode : {"", " --on-failure warn"}) {
    SCOPED_TRACE(mode);
    fs::remove_all(root);
    ASSERT_EQ(install(baseline_bundle).exit_code, 0);
    const auto run = run_shell(work, preload + host_env + " " PREWARM_RUNTIME_BINARY " -v install " + bundle.string() +
                                       " --trust " + pub.string() + " --root " + root.string() + mode);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.err.find("not installed"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("cannot start"), std::string::npos) << "the shim must bite: " << run.err;
    test::write_tree(dir.path() / "expected-nothreads", files);
    EXPECT_EQ(test::tree_hash(root / "pocl"), test::tree_hash(dir.path() / "expected-nothreads/pocl"));
  }
}

TEST_F(ContainerStart, DuplicateKeysInTheTrustPolicyAreRefusedWithFileAndLine)
{
  const auto bundle = good_bundle();
  for (const auto& [name, extra] : std::vector<std::pair<std::string, std::string>>{
         {"min_serial", "channels:\n  default:\n    min_serial: 1\n    min_serial: 100\n"},
         {"expiry", "expiry: warn\nexpiry: enforce\n"},
         {"revoked", "revoked: []\nrevoked: []\n"},
       }) {
    SCOPED_TRACE(name);
    const auto file = policy(extra, "dup-" + name + ".yaml");
    const auto run = verify(bundle, "", file);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(file.string() + ":"), std::string::npos) << "names the file and line: " << run.err;
    EXPECT_NE(run.err.find("duplicate key"), std::string::npos) << run.err;
  }
}

// Before versions, a kill between two kinds' swaps left a mixed root (then
// reported). Now the new version is published whole and the marker's rename
// is the one switch (runtime/install/install_layout.hpp): a kill at the
// publish (renameat2 #1) or right after the switch leaves one bundle, which
// env exports and status reports as fine.
TEST_F(ContainerStart, KillAtTheSwitchLeavesOneBundleAndNothingToReport)
{
  if (!have_tool("strace")) {
    GTEST_SKIP() << "strace not installed";
  }
  const Files old_files = {{"pocl/aa/k.bin", "old pocl"}, {"triton/tt/k.bin", "old triton"}};
  const Files new_files = {{"pocl/aa/k.bin", "new pocl"}, {"triton/tt/k.bin", "new triton"}};
  const auto old_bundle = factory->write("two-old", 5, {{"cpu", old_files, test::requires_cpu()}});
  const auto new_bundle = factory->write("two-new", 6, {{"cpu", new_files, test::requires_cpu()}});
  const std::string rt = host_env + " " PREWARM_RUNTIME_BINARY;
  for (const auto& [kill_at, expected] : std::vector<std::pair<std::string, std::string>>{
         {"renameat2:signal=9:when=1", "old"}, {"symlinkat:signal=9:when=1", "new"}}) {
    SCOPED_TRACE(kill_at);
    fs::remove_all(root);
    ASSERT_EQ(install(old_bundle).exit_code, 0);
    const auto trace = kill_at.substr(0, kill_at.find(':'));
    run_shell(work, host_env + " strace -f -qq -o /dev/null -e trace=" + trace + " -e inject=" + kill_at + " " +
                      PREWARM_RUNTIME_BINARY " install " + new_bundle.string() + " --trust " + pub.string() +
                      " --root " + root.string());
    const auto status = run_shell(work, rt + " status --root " + root.string());
    EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
    EXPECT_EQ(status.out.find("INTERRUPTED"), std::string::npos) << status.out;
    EXPECT_NE(status.out.find(expected == "old" ? "serial 5" : "serial 6"), std::string::npos) << status.out;
    const auto exec = run_shell(work, rt + " exec --root " + root.string() +
                                        " -- sh -c 'cat \"$POCL_CACHE_DIR/aa/k.bin\" \"$TRITON_CACHE_DIR/tt/k.bin\"'");
    EXPECT_EQ(exec.exit_code, 0) << exec.err;
    EXPECT_EQ(exec.out, expected + " pocl" + expected + " triton") << "one bundle, both kinds";
    const auto again = install(new_bundle);
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(slurp(root / "pocl/aa/k.bin"), "new pocl");
    EXPECT_EQ(slurp(root / "triton/tt/k.bin"), "new triton");
  }
}

TEST_F(ContainerStart, ReadOnlyRootThatHoldsTheBundleIsAlreadyInstalled)
{
  const auto mount_point = dir.path() / "ro";
  fs::create_directories(mount_point);
  if (::geteuid() != 0 || ::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64m") != 0) {
    GTEST_SKIP() << "needs root to mount a tmpfs";
  }
  const auto ro_root = mount_point / "cache";
  const std::string rt = host_env + " " PREWARM_RUNTIME_BINARY;
  const std::string args = " install " + baseline_bundle.string() + " --trust " + pub.string() + " --root " +
                           ro_root.string();
  ASSERT_EQ(run_shell(work, rt + args).exit_code, 0);
  ASSERT_EQ(::mount(nullptr, mount_point.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0);
  const auto again = run_shell(work, rt + args);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already installed"), std::string::npos) << again.out;
  const auto warned = run_shell(work, rt + args + " --on-failure warn");
  EXPECT_EQ(warned.exit_code, 0);
  EXPECT_EQ(warned.err.find("not installed"), std::string::npos) << "the warning must be true: " << warned.err;
  ::umount2(mount_point.c_str(), MNT_DETACH);
}

TEST_F(ContainerStart, CorruptOrEmptyMarkerIsReinstalledAndSaidSo)
{
  const auto marker = install::meta_dir(root) / install::k_marker_file;
  const auto good_marker = slurp(marker);
  for (const auto& bad : std::vector<std::string>{"", "garbage\n", good_marker.substr(0, 20)}) {
    SCOPED_TRACE(bad);
    write_text(marker, bad);
    const auto run = install(baseline_bundle);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("installing again"), std::string::npos) << "says so: " << run.err;
    EXPECT_EQ(slurp(marker).substr(0, 100), good_marker.substr(0, 100)) << "the marker is written again";
    const auto next = install(baseline_bundle);
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_NE(next.out.find("already installed"), std::string::npos) << next.out;
  }
  // The rollback guard stays strict: a corrupt state file is not "nothing".
  write_text(install::meta_dir(root) / install::k_state_file, "garbage\n");
  const auto strict = install(good_bundle());
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("E_RECORD_FORMAT"), std::string::npos) << strict.err;
}

TEST_F(ContainerStart, ControlBytesInEntryNamesAreEscaped)
{
  const auto bundle = copy_bundle(good_bundle(), "control-bytes");
  const std::string evil = "pocl/aa/x\nprewarm: installed: channel default serial 99\x1b[2K";
  const auto tar = test::RawTar().dir("pocl").dir("pocl/aa").file(evil, "k").file("pocl/aa/k.bin", "k").finish();
  replace_payload(bundle, "cpu", test::zstd_compress(tar), [&](bundle::Slice& s) {
    s.directories = {"pocl", "pocl/aa"};
    s.files = {test::file_entry("pocl/aa/k.bin", "k")};
    s.uncompressed_size = 1;
    s.entry_count = 3;
  });
  const auto run = install(bundle);
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << "an escape byte reached stderr";
  EXPECT_EQ(run.err.find("\nprewarm: installed"), std::string::npos) << "a forged log line: " << run.err;
  EXPECT_NE(run.err.find("x\\nprewarm: installed"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("\\x1b"), std::string::npos) << run.err;
}

TEST_F(ContainerStart, HugeClockSkewIsAUsageErrorNamingTheField)
{
  const auto bundle = good_bundle();
  const auto flag = install(bundle, "--clock-skew 999999999999d");
  EXPECT_EQ(flag.exit_code, 2) << flag.err;
  EXPECT_NE(flag.err.find("--clock-skew"), std::string::npos) << flag.err;
  const auto in_policy = install(bundle, "", policy("max_clock_skew: 999999999999d\n", "skew.yaml"));
  EXPECT_EQ(in_policy.exit_code, 2) << in_policy.err;
  EXPECT_NE(in_policy.err.find("max_clock_skew"), std::string::npos) << in_policy.err;
  // The largest accepted skew still accepts a valid bundle.
  const auto largest = install(bundle, "--clock-skew 36500d");
  EXPECT_EQ(largest.exit_code, 0) << largest.err;
}
