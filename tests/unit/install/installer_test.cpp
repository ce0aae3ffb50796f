// SPDX-License-Identifier: Apache-2.0
// The installer end to end on real signed bundles: each verification failure,
// idempotency, rollback, locking, commit paths, and that every failure leaves
// the previous cache byte-identical.
#include "install_test_support.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"
#include "bundle/slice_reader.hpp"
#include "install/application_environment.hpp"
#include "install/install_layout.hpp"
#include "install/install_lock.hpp"
#include "install/install_records.hpp"
#include "install/installer.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <thread>

using namespace prewarm;
using namespace prewarm::test;
using namespace std::chrono_literals;

namespace {

class InstallerTest : public ::testing::Test
{
protected:
  TempDir dir = scratch();
  BundleFactory factory{dir.path()};
  fs::path root = dir.path() / "root";
  std::vector<host::HostDevice> host = cpu_host();

  BundleFactory::SliceSpec cpu_slice(const std::string& version)
  {
    return {"cpu", {{"pocl/ab/kernel.bin", "pocl kernel " + version}, {"pocl/ab/kernel.meta", "meta"},
                    {"programs/00/p.bin", "program " + version}},
            requires_cpu()};
  }

  Result<install::InstallReport> install(const fs::path& bundle, install::InstallOptions options = {})
  {
    return install::install_bundle(bundle, factory.trust(), root, host, options);
  }

  std::string read(const fs::path& path) { return read_file(path.string()).value_or("<unreadable>"); }

  void expect_failure_left_root_unchanged(const Result<install::InstallReport>& result, const std::string& code,
                                          const std::string& hash_before)
  {
    ASSERT_FALSE(result) << "expected " << code;
    EXPECT_EQ(result.error().code(), code) << result.error().message();
    EXPECT_EQ(tree_hash(root), hash_before) << "the previous cache changed";
    if (fs::exists(install::meta_dir(root))) {
      for (const auto& e : fs::directory_iterator(install::meta_dir(root))) {
        EXPECT_FALSE(e.path().filename().string().starts_with("staging.")) << "staging left: " << e.path();
      }
      // The lock is free again.
      auto lock = install::InstallLock::acquire(install::meta_dir(root) / install::k_lock_file, 0ms);
      EXPECT_TRUE(lock) << "lock still held";
    }
  }
};

} // namespace

TEST_F(InstallerTest, InstallsIntoAnEmptyRoot)
{
  const auto bundle = factory.write("b1", 1, {cpu_slice("v1")});
  auto report = install(bundle);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->outcome, install::InstallOutcome::installed);
  EXPECT_EQ(read(root / "pocl/ab/kernel.bin"), "pocl kernel v1");
  EXPECT_EQ(read(root / "programs/00/p.bin"), "program v1");
  ASSERT_EQ(report->commits.size(), 2u);
  EXPECT_EQ(report->commits[0].method, install::CommitMethod::renamed);

  auto marker = install::read_marker(root);
  ASSERT_TRUE(marker && *marker);
  EXPECT_EQ((*marker)->manifest_sha256, report->manifest_sha256);
  EXPECT_EQ((*marker)->slice_ids, std::vector<std::string>{"cpu"});
  ASSERT_EQ((*marker)->kinds.size(), 2u);
  EXPECT_EQ((*marker)->kinds[0].kind, "pocl");
  EXPECT_EQ((*marker)->kinds[0].files, 2u);
  EXPECT_FALSE(fs::exists(install::meta_dir(root) / install::k_committing_file));
  // Installed files carry the install time, not the archive's fixed time:
  // LRU caches would evict SOURCE_DATE_EPOCH-stamped files first.
  const auto mtime = fs::last_write_time(root / "pocl/ab/kernel.bin");
  EXPECT_GT(mtime, fs::file_time_type::clock::now() - 1h);
}

TEST_F(InstallerTest, TritonGroupFilesNameTheInstalledTree)
{
  // As Triton's put_group() wrote it at build time (audit/triton_groups.hpp).
  const std::string build = "/tmp/prewarm-build-test_only/job/staging/triton/KEY";
  const auto bundle = factory.write(
    "b1", 1,
    {{"cpu",
      {{"triton/KEY/k.cubin", "ELF"},
       {"triton/KEY/k.json", R"({"name": "k"})"},
       {"triton/KEY/__grp__k.json", R"({"child_paths": {"k.cubin": ")" + build + R"(/k.cubin", "k.json": ")" + build +
                                      R"(/k.json"}})"}},
      requires_cpu()}});
  auto report = install(bundle);
  ASSERT_TRUE(report) << report.error().message();
  const auto group = read(root / "triton/KEY/__grp__k.json");
  EXPECT_EQ(group.find(build), std::string::npos) << group;
  // The version's own directory (what env/exec export), not ROOT/triton,
  // which a later install re-points.
  const auto version = install::versions_dir(root) / report->version;
  EXPECT_NE(group.find(fmt::format(R"("k.cubin":"{}")", (version / "triton/KEY/k.cubin").string())), std::string::npos)
    << group;
  // The inventory the audit compares with lists the rewritten file, and the
  // marker counts its bytes as installed.
  const auto files = read(version / install::k_version_files_file);
  EXPECT_NE(files.find(fmt::format(" {} KEY/__grp__k.json\n", sha256_hex(group))), std::string::npos) << files;
  auto marker = install::read_marker(root);
  ASSERT_TRUE(marker && *marker);
  EXPECT_EQ((*marker)->kinds[0].bytes, fs::file_size(root / "triton/KEY/__grp__k.json") + 3 + 13);
}

TEST_F(InstallerTest, SecondInstallIsANoOp)
{
  const auto bundle = factory.write("b1", 1, {cpu_slice("v1")});
  ASSERT_TRUE(succeeded(install(bundle)));
  const auto hash = tree_hash(root);
  const auto mtimes = file_mtimes(root);
  std::this_thread::sleep_for(20ms);
  auto again = install(bundle);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->outcome, install::InstallOutcome::already_installed);
  EXPECT_TRUE(again->commits.empty());
  EXPECT_EQ(tree_hash(root), hash);
  EXPECT_EQ(file_mtimes(root), mtimes) << "a file was rewritten";
}

TEST(HostSource, AskedOnceProbesAndFingerprintsAtMostOnce)
{
  int probes = 0;
  int fingerprints = 0;
  const install::HostSource counted{[&probes](const host::FrameworkSearch&) -> Result<std::vector<host::HostDevice>> {
                                      ++probes;
                                      return cpu_host();
                                    },
                                    [&fingerprints](const host::FrameworkSearch& search) {
                                      ++fingerprints;
                                      return std::string(search.wanted ? "with" : "fingerprint");
                                    }};
  const host::FrameworkSearch without{false, {}};
  const host::FrameworkSearch with{true, {}};
  const auto once = install::asked_once(counted);
  EXPECT_EQ(probes, 0) << "making the source must not probe";
  const auto first = once.probe(with);
  const auto second = once.probe(with);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(first->size(), cpu_host().size());
  EXPECT_EQ(second->size(), first->size());
  EXPECT_EQ(once.fingerprint(without), "fingerprint");
  EXPECT_EQ(once.fingerprint(without), "fingerprint");
  EXPECT_EQ(once.fingerprint(with), "with");
  EXPECT_EQ(once.fingerprint(with), "with");
  EXPECT_EQ(fingerprints, 2) << "one per kind of fingerprint";
  EXPECT_FALSE(install::asked_once({counted.probe, {}}).fingerprint) << "no fingerprint stays none";
}

TEST_F(InstallerTest, RemovedCacheDirectoryIsInstalledAgain)
{
  const auto bundle = factory.write("b1", 1, {cpu_slice("v1")});
  ASSERT_TRUE(succeeded(install(bundle)));
  fs::remove_all(current_version(root) / "pocl");
  auto again = install(bundle);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->outcome, install::InstallOutcome::installed);
  EXPECT_EQ(read(root / "pocl/ab/kernel.bin"), "pocl kernel v1");
  // A removed ROOT/<kind> link is only re-pointed: the version is complete.
  fs::remove(root / "pocl");
  auto relinked = install(bundle);
  ASSERT_TRUE(relinked) << relinked.error().message();
  EXPECT_EQ(relinked->outcome, install::InstallOutcome::already_installed);
  EXPECT_EQ(read(root / "pocl/ab/kernel.bin"), "pocl kernel v1");
}

TEST_F(InstallerTest, NewerBundleIsANewVersionAndTheOldOneGoes)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {cpu_slice("v1")}))));
  const auto first = current_version(root);
  auto report = install(factory.write("b2", 2, {{"cpu", {{"pocl/cd/other.bin", "v2"}}, requires_cpu()}}));
  ASSERT_TRUE(report) << report.error().message();
  ASSERT_EQ(report->commits.size(), 1u);
  EXPECT_EQ(report->commits[0].method, install::CommitMethod::renamed);
  EXPECT_EQ(current_version(root), install::versions_dir(root) / report->version);
  EXPECT_NE(current_version(root), first);
  EXPECT_FALSE(fs::exists(first)) << "the old version is held by nobody: removed";
  EXPECT_EQ(read(root / "pocl/cd/other.bin"), "v2");
  EXPECT_FALSE(fs::exists(root / "pocl/ab/kernel.bin")) << "the old tree should be gone";
  EXPECT_FALSE(fs::exists(fs::symlink_status(root / "programs"))) << "the link of a kind no longer installed";
  auto env = install::environment(root);
  ASSERT_TRUE(env);
  for (const auto& s : env->settings) {
    EXPECT_NE(s.name, "PREWARM_PROGRAM_STORE");
  }
}

TEST_F(InstallerTest, AHeldVersionStaysUntilItsHolderLetsGo)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {cpu_slice("v1")}))));
  auto held = install::environment(root, install::VersionHold::shared);
  ASSERT_TRUE(held) << held.error().message();
  const auto first = current_version(root);
  ASSERT_TRUE(succeeded(install(factory.write("b2", 2, {cpu_slice("v2")}))));
  EXPECT_TRUE(fs::exists(first / "pocl/ab/kernel.bin")) << "removed while an application held it";
  EXPECT_EQ(read(root / "pocl/ab/kernel.bin"), "pocl kernel v2");
  held->held.clear(); // the application exits
  ASSERT_TRUE(succeeded(install(factory.write("b2", 2, {cpu_slice("v2")})))); // already installed: collects
  EXPECT_FALSE(fs::exists(first));
}

TEST_F(InstallerTest, TamperedPayloadIsRejectedBeforeParsingAndCacheIsUnchanged)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {cpu_slice("v1")}))));
  const auto hash = tree_hash(root);
  const auto bundle = factory.write("b2", 2, {cpu_slice("v2")});
  {
    const auto payload = bundle / "slices/cpu.tar.zst";
    std::fstream f(payload, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(40);
    char c = 0;
    f.read(&c, 1);
    f.seekp(40);
    c = static_cast<char>(c ^ 0x01);
    f.write(&c, 1);
  }
  const auto opened = bundle::archive_reader_open_count();
  expect_failure_left_root_unchanged(install(bundle), "E_PAYLOAD_DIGEST", hash);
  EXPECT_EQ(bundle::archive_reader_open_count(), opened) << "libarchive saw a tampered payload";
}

TEST_F(InstallerTest, WrongKeyWritesNothing)
{
  auto other = pack::PrivateKey::generate();
  ASSERT_TRUE(other);
  const auto bundle = factory.write("b1", 1, {cpu_slice("v1")}, &*other);
  auto result = install(bundle);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().category(), Errc::verify);
  EXPECT_TRUE(result.error().code() == "E_SIG_UNTRUSTED_KEY" || result.error().code() == "E_SIG")
    << result.error().code();
  EXPECT_FALSE(fs::exists(root)) << "a rejected bundle must not create the root";
}

TEST_F(InstallerTest, TruncatedManifestFailsTheSignature)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {cpu_slice("v1")}))));
  const auto hash = tree_hash(root);
  const auto bundle = factory.write("b2", 2, {cpu_slice("v2")});
  const auto manifest = read(bundle / "manifest");
  fs::remove(bundle / "manifest");
  std::ofstream(bundle / "manifest", std::ios::binary) << manifest.substr(0, manifest.size() / 2);
  auto result = install(bundle);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), "E_SIG") << result.error().message();
  EXPECT_EQ(tree_hash(root), hash);
}

TEST_F(InstallerTest, ExpiredBundleEnforcedOrWarned)
{
  const auto now = now_seconds();
  const auto bundle = factory.write("old", 1, {cpu_slice("v1")}, nullptr, "default", now - 48h, now - 24h);
  auto enforced = install(bundle);
  ASSERT_FALSE(enforced);
  EXPECT_EQ(enforced.error().code(), "E_EXPIRED");
  EXPECT_EQ(enforced.error().category(), Errc::verify);
  EXPECT_FALSE(fs::exists(root));

  install::InstallOptions warn;
  warn.verify.expiry = install::ExpiryPolicy::warn;
  auto warned = install(bundle, warn);
  ASSERT_TRUE(warned) << warned.error().message();
  ASSERT_FALSE(warned->warnings.empty());
  EXPECT_NE(warned->warnings[0].find("E_EXPIRED"), std::string::npos);
}

TEST_F(InstallerTest, IssuedInTheFutureBeyondSkewIsAClockError)
{
  const auto now = now_seconds();
  const auto bundle = factory.write("future", 1, {cpu_slice("v1")}, nullptr, "default", now + 2h, now + 48h);
  auto result = install(bundle);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), "E_CLOCK");
  install::InstallOptions skew;
  skew.verify.clock_skew = 3h;
  EXPECT_TRUE(succeeded(install(bundle, skew)));
}

TEST_F(InstallerTest, RollbackAndEquivocationAreRefused)
{
  ASSERT_TRUE(succeeded(install(factory.write("b5", 5, {cpu_slice("v5")}))));
  const auto hash = tree_hash(root);
  expect_failure_left_root_unchanged(install(factory.write("b4", 4, {cpu_slice("v4")})), "E_ROLLBACK", hash);
  expect_failure_left_root_unchanged(install(factory.write("b5bis", 5, {cpu_slice("v5-other")})),
                                     "E_ROLLBACK_EQUIVOCATION", hash);
  // Another channel has its own serials (replacing the installed channel
  // on purpose: channel_guard.hpp).
  install::InstallOptions replace;
  replace.channels = install::ChannelReplacement::replace;
  EXPECT_TRUE(succeeded(install(factory.write("c1", 1, {cpu_slice("c1")}, nullptr, "other"), replace)));
  // ... and the guard outlives that: channel default is still at 5.
  auto result = install(factory.write("b3", 3, {cpu_slice("v3")}), replace);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), "E_ROLLBACK");
}

TEST_F(InstallerTest, NoMatchingSliceIsNotApplicableWithReasons)
{
  const auto bundle =
    factory.write("gpu", 1, {{"a770", {{"neo/x.bin", "neo"}}, {{"pci-id", "==", "0x56a0"}, {"vendor", "==", "intel"}}}});
  auto result = install(bundle);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().category(), Errc::not_applicable);
  EXPECT_EQ(exit_code(result.error().category()), 4);
  EXPECT_NE(result.error().message().find("slice a770"), std::string::npos) << result.error().message();
  EXPECT_NE(result.error().message().find("test cpu"), std::string::npos) << result.error().message();
  EXPECT_FALSE(fs::exists(root));
}

TEST_F(InstallerTest, OnlyMatchingSlicesAreInstalled)
{
  const auto bundle = factory.write(
    "mixed", 1, {{"a770", {{"neo/x.bin", "neo"}}, {{"vendor", "==", "intel"}}}, cpu_slice("v1")});
  auto report = install(bundle);
  ASSERT_TRUE(report) << report.error().message();
  ASSERT_EQ(report->selected.size(), 1u);
  EXPECT_EQ(report->selected[0].slice_id, "cpu");
  ASSERT_EQ(report->skipped.size(), 1u);
  EXPECT_EQ(report->skipped[0].slice_id, "a770");
  EXPECT_FALSE(fs::exists(root / "neo"));
}

TEST_F(InstallerTest, LockHeldByAnotherProcessTimesOutThenWaits)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {cpu_slice("v1")}))));
  const auto hash = tree_hash(root);
  const auto bundle = factory.write("b2", 2, {cpu_slice("v2")});
  const auto lock_file = install::meta_dir(root) / install::k_lock_file;

  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::open(lock_file.c_str(), O_RDWR);
    ::flock(fd, LOCK_EX);
    (void)!::write(ready[1], "x", 1);
    ::usleep(700'000); // holds the lock for 0.7 s, then exits (releasing it)
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);

  install::InstallOptions impatient;
  impatient.lock_timeout = 100ms;
  auto timed_out = install(bundle, impatient);
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().code(), "E_LOCK_TIMEOUT");
  EXPECT_EQ(tree_hash(root), hash);

  install::InstallOptions patient;
  patient.lock_timeout = 10s;
  auto waited = install(bundle, patient);
  ASSERT_TRUE(waited) << waited.error().message();
  EXPECT_EQ(read(root / "pocl/ab/kernel.bin"), "pocl kernel v2");
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(InstallerTest, APlantedLinkAtAKindIsReplacedNeverFollowed)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {cpu_slice("v1")}))));
  fs::create_directories(dir.path() / "elsewhere");
  fs::remove(root / "programs");
  fs::create_directory_symlink(dir.path() / "elsewhere", root / "programs");
  const auto outside = tree_hash(dir.path() / "elsewhere");
  auto report = install(factory.write("b2", 2, {cpu_slice("v2")}));
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(tree_hash(dir.path() / "elsewhere"), outside) << "wrote through the symlink";
  EXPECT_EQ(fs::read_symlink(root / "programs"), fs::path(".prewarm/versions") / report->version / "programs");
  EXPECT_EQ(read(root / "programs/00/p.bin"), "program v2");
}

TEST_F(InstallerTest, RootThatIsASymlinkIsRefused)
{
  fs::create_directory(dir.path() / "real");
  fs::create_directory_symlink(dir.path() / "real", root);
  auto result = install(factory.write("b1", 1, {cpu_slice("v1")}));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), "E_TARGET_UNSAFE");
  EXPECT_TRUE(fs::is_empty(dir.path() / "real"));
}

TEST_F(InstallerTest, StaleStagingAndInterruptedCommitAreRecovered)
{
  const auto bundle = factory.write("b1", 1, {cpu_slice("v1")});
  ASSERT_TRUE(succeeded(install(bundle)));
  fs::create_directories(install::meta_dir(root) / "staging.crashed/pocl");
  // A crash between the commit and the marker leaves the note: the marker
  // can no longer be trusted, so the same bundle is installed again.
  std::ofstream(install::meta_dir(root) / install::k_committing_file) << "x\n";
  fs::remove(current_version(root) / "pocl/ab/kernel.meta");
  auto report = install(bundle);
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->outcome, install::InstallOutcome::installed);
  EXPECT_TRUE(fs::exists(root / "pocl/ab/kernel.meta"));
  EXPECT_FALSE(fs::exists(install::meta_dir(root) / "staging.crashed"));
  EXPECT_FALSE(fs::exists(install::meta_dir(root) / install::k_committing_file));
}

TEST_F(InstallerTest, NotEnoughSpaceIsRefusedBeforeWriting)
{
  install::InstallOptions greedy;
  greedy.space_margin = install::SpaceMargin::bytes(std::uint64_t{1} << 62); // more than any disk
  auto result = install(factory.write("b1", 1, {cpu_slice("v1")}), greedy);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), "E_NOSPC");
  EXPECT_FALSE(fs::exists(root / "pocl"));
  EXPECT_FALSE(fs::exists(install::meta_dir(root) / install::k_marker_file));
}

TEST_F(InstallerTest, SyclHygieneDropsLocksAndSizeFile)
{
  auto report = install(factory.write(
    "sycl", 1,
    {{"cpu", {{"sycl/a/b/item.bin", "bin"}, {"sycl/a/b/item.lock", ""}, {"sycl/cache_size.txt", "123"}},
      requires_cpu()}}));
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_TRUE(fs::exists(root / "sycl/a/b/item.bin"));
  EXPECT_FALSE(fs::exists(root / "sycl/a/b/item.lock"));
  EXPECT_FALSE(fs::exists(root / "sycl/cache_size.txt"));
}

TEST_F(InstallerTest, EnvironmentPointsAtInstalledKinds)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {cpu_slice("v1")}))));
  auto env = install::environment(root);
  ASSERT_TRUE(env) << env.error().message();
  std::map<std::string, std::string> vars;
  for (const auto& s : env->settings) {
    vars[s.name] = s.value;
  }
  // The version's own paths, never ROOT/<kind> (re-pointed by a later install).
  EXPECT_EQ(vars.at("POCL_CACHE_DIR"), (current_version(root) / "pocl").string());
  EXPECT_EQ(vars.at("PREWARM_PROGRAM_STORE"), (current_version(root) / "programs").string());
  EXPECT_EQ(vars.at("PREWARM_ROOT"), root.string());

  auto none = install::environment(dir.path() / "empty");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), "E_NOT_INSTALLED");
}

TEST_F(InstallerTest, EnvironmentRecreatesAMissingNeoDirectory)
{
  ASSERT_TRUE(succeeded(install(factory.write("b1", 1, {{"cpu", {{"neo/cl_cache/k.cl_cache", "neo"}}, requires_cpu()}}))));
  fs::remove_all(current_version(root) / "neo"); // e.g. an application cleaned its cache
  auto env = install::environment(root);
  ASSERT_TRUE(env) << env.error().message();
  EXPECT_TRUE(fs::is_directory(root / "neo"));
  bool persistent = false;
  for (const auto& s : env->settings) {
    persistent = persistent || (s.name == "NEO_CACHE_PERSISTENT" && s.value == "1");
  }
  EXPECT_TRUE(persistent);
}

TEST(ShellExports, QuotesAnyValue)
{
  const auto text = install::format_shell_exports({{"A", "plain"}, {"B", "it's $HOME `x` \"q\""}});
  EXPECT_EQ(text, "export A='plain'\nexport B='it'\\''s $HOME `x` \"q\"'\n");
  // And the shell agrees.
  auto dir = scratch();
  const auto script = dir.path() / "s.sh";
  std::ofstream(script) << text << "printf '%s' \"$B\" > " << (dir.path() / "out").string() << "\n";
  ASSERT_EQ(std::system(("sh " + script.string()).c_str()), 0);
  EXPECT_EQ(read_file((dir.path() / "out").string()).value_or(""), "it's $HOME `x` \"q\"");
}

// Timing, not correctness: run with --gtest_also_run_disabled_tests to print
// how long each install path takes for a 64 MiB / 2048-file slice.
TEST_F(InstallerTest, DISABLED_TimingOf64MiBSlice)
{
  Files files;
  std::string blob(32 * 1024, '\0');
  for (int i = 0; i < 2048; ++i) {
    for (std::size_t j = 0; j < blob.size(); j += 64) {
      blob[j] = static_cast<char>((i * 131 + static_cast<int>(j)) & 0xff); // compressible, not trivially
    }
    files[fmt::format("pocl/{:02x}/{:04x}.bin", i % 64, i)] = blob;
  }
  const auto time = [](auto&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  fs::path b1;
  fs::path b2;
  const double write_ms = time([&] { b1 = factory.write("b1", 1, {{"cpu", files, requires_cpu()}}); });
  files["pocl/00/extra.bin"] = "extra";
  b2 = factory.write("b2", 2, {{"cpu", files, requires_cpu()}});
  const double verify_ms =
    time([&] { ASSERT_TRUE(install::verify_bundle(b1, factory.trust(), now_seconds())); });
  const auto phases = [](const Result<install::InstallReport>& r) {
    std::string out;
    for (const auto& p : r->phases) {
      out += fmt::format(" {}={:.0f}ms", p.name, p.seconds * 1000);
    }
    return out;
  };
  std::string fresh_phases;
  std::string exchange_phases;
  const double fresh_ms = time([&] {
    auto r = install(b1);
    ASSERT_TRUE(r);
    fresh_phases = phases(r);
  });
  const double noop_ms = time([&] { ASSERT_TRUE(succeeded(install(b1))); });
  const double exchange_ms = time([&] {
    auto r = install(b2);
    ASSERT_TRUE(r);
    exchange_phases = phases(r);
  });
  fs::remove_all(root);
  install::InstallOptions each_file;
  each_file.sync = install::SyncMethod::each_file;
  std::string each_file_phases;
  const double each_file_ms = time([&] {
    auto r = install(b1, each_file);
    ASSERT_TRUE(r);
    each_file_phases = phases(r);
  });
  std::printf("fresh:%s\nexchange:%s\nfresh with fsync per file (%.0f ms):%s\n", fresh_phases.c_str(),
              exchange_phases.c_str(), each_file_ms, each_file_phases.c_str());
  std::printf("payload %llu bytes; write bundle %.0f ms; verify %.0f ms; install fresh %.0f ms; no-op %.1f ms; "
              "new version %.0f ms\n",
              static_cast<unsigned long long>(fs::file_size(b1 / "slices/cpu.tar.zst")), write_ms, verify_ms, fresh_ms,
              noop_ms, exchange_ms);
}

// signing-archives.md §7 case 53: a cache directory baked into a lower image
// layer cannot be renamed on overlayfs (EXDEV). Versions never rename it: the
// new version is made in the upper layer, the marker switches, and the
// lower directory stays where it is, unused (env/exec name the version).
// Needs permission to mount overlayfs (root here); skips otherwise.
TEST_F(InstallerTest, OverlayfsLowerDirectoryIsLeftAndTheVersionServes)
{
  const auto lower = dir.path() / "lower";
  const auto upper = dir.path() / "upper";
  const auto work = dir.path() / "work";
  write_tree(lower, {{"pocl/ab/from-image.bin", "image"}});
  fs::create_directories(upper);
  fs::create_directories(work);
  fs::create_directories(root);
  const auto options = fmt::format("lowerdir={},upperdir={},workdir={}", lower.string(), upper.string(), work.string());
  if (::mount("overlay", root.c_str(), "overlay", 0, options.c_str()) != 0) {
    GTEST_SKIP() << "cannot mount overlayfs here: " << errno_message(errno);
  }
  struct Unmount
  {
    fs::path path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{root};

  auto report = install(factory.write("b1", 1, {cpu_slice("v1")}));
  ASSERT_TRUE(report) << report.error().message();
  auto env = install::environment(root);
  ASSERT_TRUE(env) << env.error().message();
  std::string pocl;
  for (const auto& s : env->settings) {
    pocl = s.name == "POCL_CACHE_DIR" ? s.value : pocl;
  }
  EXPECT_EQ(read(fs::path(pocl) / "ab/kernel.bin"), "pocl kernel v1");
  EXPECT_EQ(fs::path(pocl), current_version(root) / "pocl");
}

// §7 case 45: the filesystem fills up during extraction (a tmpfs with few
// inodes: statvfs shows free bytes, creating files fails). Staging is removed,
// the previous cache and marker are unchanged. Needs mount permission.
TEST_F(InstallerTest, NoSpaceDuringExtractionLeavesThePreviousCache)
{
  fs::create_directories(root);
  if (::mount("tmpfs", root.c_str(), "tmpfs", 0, "size=64m,nr_inodes=40") != 0) {
    GTEST_SKIP() << "cannot mount tmpfs here: " << errno_message(errno);
  }
  struct Unmount
  {
    fs::path path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{root};
  install::InstallOptions options;
  options.space_margin = install::SpaceMargin::bytes(0); // the bytes are there; the inodes are not
  auto first = install(factory.write("b1", 1, {cpu_slice("v1")}), options);
  ASSERT_TRUE(first) << first.error().message();
  const auto hash = tree_hash(root);
  Files many;
  for (int i = 0; i < 60; ++i) {
    many[fmt::format("pocl/{:02}/f.bin", i)] = "x";
  }
  expect_failure_left_root_unchanged(install(factory.write("b2", 2, {{"cpu", many, requires_cpu()}}), options), "E_IO",
                                     hash);
}

// §7 case 49: several installers on one root at once: exactly one installs,
// the others wait for the lock and find the marker.
TEST_F(InstallerTest, ConcurrentInstallersInstallOnce)
{
  const auto bundle = factory.write("b1", 1, {cpu_slice("v1")});
  constexpr int k_installers = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < k_installers; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      install::InstallOptions options;
      options.lock_timeout = 60s;
      auto r = install(bundle, options);
      ::_exit(!r ? 1 : r->outcome == install::InstallOutcome::installed ? 10 : 20);
    }
    children.push_back(pid);
  }
  int installed = 0;
  int already = 0;
  for (const pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    installed += WEXITSTATUS(status) == 10;
    already += WEXITSTATUS(status) == 20;
  }
  EXPECT_EQ(installed, 1);
  EXPECT_EQ(already, k_installers - 1);
  EXPECT_EQ(read(root / "pocl/ab/kernel.bin"), "pocl kernel v1");
}
