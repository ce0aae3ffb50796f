// SPDX-License-Identifier: Apache-2.0
// The prewarm-runtime binary: exit codes, --on-failure warn, env, exec.
#include "install_test_support.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

using namespace prewarm;
using namespace prewarm::test;

namespace {

struct Run
{
  int exit_code = -1;
  std::string out; // stdout
  std::string err; // stderr
};

std::string
slurp(const fs::path& path)
{
  return read_file(path.string()).value_or("");
}

// Runs prewarm-runtime through sh with the given argument string.
Run
runtime(const fs::path& work, const std::string& args, const std::string& env = "")
{
  const auto out = work / "stdout";
  const auto err = work / "stderr";
  const std::string command = env + " " PREWARM_RUNTIME_BINARY " " + args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

class RuntimeCli : public ::testing::Test
{
protected:
  TempDir dir = scratch();
  BundleFactory factory{dir.path()};
  fs::path pub = dir.path() / "test_only.pub";
  fs::path host_file = dir.path() / "host.json";
  std::string host_env;

  void SetUp() override
  {
    std::ofstream(pub) << factory.test_only_key.public_key().to_pem();
    std::ofstream(host_file) << R"([{"description": "test cpu", "vendor": "cpu"}])";
    host_env = "PREWARM_HOST_DEVICES=" + host_file.string();
  }

  fs::path good_bundle()
  {
    return factory.write("good", 1, {{"cpu", {{"pocl/ab/k.bin", "k"}}, requires_cpu()}});
  }

  // The good bundle installed under `root`: the install's arguments (run
  // again for a repeated install), and the version's start record.
  std::string install_recorded(const fs::path& root, fs::path& start, std::string& recorded)
  {
    const auto install =
      "install " + good_bundle().string() + " --trust " + pub.string() + " --root " + root.string();
    const auto first = runtime(dir.path(), install, host_env);
    EXPECT_EQ(first.exit_code, 0) << first.err;
    start = test::current_version(root) / ".start";
    recorded = slurp(start);
    return install;
  }
};

} // namespace

TEST_F(RuntimeCli, VerifyGoodAndBad)
{
  const auto bundle = good_bundle();
  auto ok = runtime(dir.path(), "verify " + bundle.string() + " --trust " + pub.string());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("signature: good"), std::string::npos) << ok.out;

  std::fstream f(bundle / "slices/cpu.tar.zst", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(20);
  f.put('\x7f');
  f.close();
  auto bad = runtime(dir.path(), "verify " + bundle.string() + " --trust " + pub.string());
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("E_PAYLOAD_DIGEST"), std::string::npos) << bad.err;
}

TEST_F(RuntimeCli, InstallFailModesAndWarn)
{
  const auto root = dir.path() / "root";
  const auto gpu_only = factory.write("gpu", 1, {{"arc", {{"neo/x", "x"}}, {{"vendor", "==", "intel"}}}});
  const auto base = "install " + gpu_only.string() + " --trust " + pub.string() + " --root " + root.string();
  auto failed = runtime(dir.path(), base, host_env);
  EXPECT_EQ(failed.exit_code, 4) << failed.err;
  EXPECT_NE(failed.err.find("using test host description"), std::string::npos) << failed.err;

  auto warned = runtime(dir.path(), base + " --on-failure warn", host_env);
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_NE(warned.err.find("prewarm-runtime: warning: not installed: E_TARGET_MISMATCH"), std::string::npos)
    << warned.err;
  EXPECT_NE(warned.err.find("the application will compile kernels itself (JIT)"), std::string::npos);

  auto usage = runtime(dir.path(), "install " + gpu_only.string() + " --root " + root.string(), host_env);
  EXPECT_EQ(usage.exit_code, 2) << usage.err; // --trust missing
}

TEST_F(RuntimeCli, InstallEnvExecStatus)
{
  const auto root = dir.path() / "root";
  const auto bundle = good_bundle();
  auto installed = runtime(dir.path(),
                           "install " + bundle.string() + " --trust " + pub.string() + " --root " + root.string() +
                             " --json",
                           host_env);
  ASSERT_EQ(installed.exit_code, 0) << installed.err;
  EXPECT_NE(installed.out.find("\"outcome\": \"installed\""), std::string::npos) << installed.out;

  auto env = runtime(dir.path(), "env --root " + root.string());
  ASSERT_EQ(env.exit_code, 0) << env.err;
  const auto pocl = (test::current_version(root) / "pocl").string();
  EXPECT_NE(env.out.find("export POCL_CACHE_DIR='" + pocl + "'"), std::string::npos) << env.out;

  auto exec = runtime(dir.path(), "exec --root " + root.string() + " -- sh -c 'echo \"$POCL_CACHE_DIR\"; exit 5'");
  EXPECT_EQ(exec.exit_code, 5) << exec.err; // the command's own status: it replaced the process
  EXPECT_EQ(exec.out, pocl + "\n");

  auto exec_empty = runtime(dir.path(), "exec --root " + (dir.path() / "nothing").string() + " -- echo started");
  EXPECT_EQ(exec_empty.exit_code, 0);
  EXPECT_EQ(exec_empty.out, "started\n");
  EXPECT_NE(exec_empty.err.find("E_NOT_INSTALLED"), std::string::npos) << exec_empty.err;

  auto missing = runtime(dir.path(), "exec --root " + root.string() + " -- prewarm-test-no-such-program");
  EXPECT_EQ(missing.exit_code, 127);

  auto status = runtime(dir.path(), "status --root " + root.string(), host_env);
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("slice cpu: made for vendor == cpu; matches this host"), std::string::npos) << status.out;

  // The same root seen from a host with another device: a warning per slice.
  std::ofstream(host_file) << R"([{"description": "test A770", "vendor": "intel", "pci-id": "0x56a0"}])";
  auto other = runtime(dir.path(), "status --root " + root.string() + " --json", host_env);
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("\"matches_host\": false"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("was made for vendor == cpu"), std::string::npos) << other.out;
}

// status --audit since install: a file an earlier run rewrote under the same
// name is new ("rewritten"), with other bytes or the same ones: a rebuilt
// entry is never reused. The install's list records each file's state.
TEST_F(RuntimeCli, StatusAuditCountsAFileRewrittenSinceInstall)
{
  const auto root = dir.path() / "root";
  const auto bundle =
    factory.write("two", 1, {{"cpu", {{"pocl/ab/k.bin", "kernel"}, {"pocl/cd/j.bin", "other"}}, requires_cpu()}});
  auto installed =
    runtime(dir.path(), "install " + bundle.string() + " --trust " + pub.string() + " --root " + root.string(), host_env);
  ASSERT_EQ(installed.exit_code, 0) << installed.err;
  const auto version = test::current_version(root);
  EXPECT_TRUE(slurp(version / ".files").starts_with("prewarm-files 3\n")) << slurp(version / ".files");

  auto clean = runtime(dir.path(), "status --audit --root " + root.string(), host_env);
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_NE(clean.out.find("pocl: ? reused, 0 new"), std::string::npos) << clean.out;

  // Same length, other bytes (a recompiled entry); the same bytes again.
  std::ofstream(version / "pocl/ab/k.bin", std::ios::trunc) << "KERNEL";
  std::ofstream(version / "pocl/cd/j.bin", std::ios::trunc) << "other";
  auto rewritten = runtime(dir.path(), "status --audit --json --root " + root.string(), host_env);
  ASSERT_EQ(rewritten.exit_code, 0) << rewritten.err;
  EXPECT_NE(rewritten.out.find("\"rewritten_files\": 2"), std::string::npos) << rewritten.out;
  EXPECT_NE(rewritten.out.find("\"new_files\": 2"), std::string::npos) << rewritten.out;
  auto text = runtime(dir.path(), "status --audit --root " + root.string(), host_env);
  EXPECT_NE(text.out.find("pocl: ? reused, 2 new (2 rewritten)"), std::string::npos) << text.out;
}

// A repeated install on the host it was made on is done without probing the
// host (the marker holds its fingerprint); an ICD file added since makes it
// probe in full, and the next one is a no-op without the probe again. The
// real probe, through the real loader, on PoCL.
TEST_F(RuntimeCli, RepeatedInstallSkipsTheProbeUntilTheHostChanges)
{
  const fs::path pocl_icd = "/etc/OpenCL/vendors/pocl.icd";
  if (!fs::exists(pocl_icd)) {
    GTEST_SKIP() << "needs PoCL's ICD (pocl-opencl-icd)";
  }
  const auto vendors = dir.path() / "vendors";
  fs::create_directories(vendors);
  fs::copy_file(pocl_icd, vendors / "pocl.icd");
  const std::string env = "OCL_ICD_VENDORS=" + vendors.string() + " PREWARM_PYTHON=none";
  const auto root = dir.path() / "root";
  const auto install =
    "-v install " + good_bundle().string() + " --trust " + pub.string() + " --root " + root.string() + " --json";
  constexpr std::string_view skipped = "host fingerprint unchanged since the install: devices not probed";
  constexpr std::string_view probed = "host devices:";

  auto first = runtime(dir.path(), install, env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("\"outcome\": \"installed\""), std::string::npos) << first.out;
  EXPECT_NE(first.err.find(probed), std::string::npos) << first.err;
  EXPECT_NE(slurp(root / ".prewarm/installed").find("host-fingerprint "), std::string::npos);

  auto again = runtime(dir.path(), install, env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("\"outcome\": \"already-installed\""), std::string::npos) << again.out;
  EXPECT_NE(again.err.find(skipped), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find(probed), std::string::npos) << again.err;

  std::ofstream(vendors / "prewarm-test-fake.icd") << "libprewarm-test-no-such-icd.so\n";
  auto changed = runtime(dir.path(), install, env);
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_NE(changed.out.find("\"outcome\": \"already-installed\""), std::string::npos) << changed.out;
  EXPECT_EQ(changed.err.find(skipped), std::string::npos) << changed.err;
  EXPECT_NE(changed.err.find("not the install's: probing the host"), std::string::npos) << changed.err;
  EXPECT_NE(changed.err.find(probed), std::string::npos) << changed.err;

  auto remembered = runtime(dir.path(), install, env);
  ASSERT_EQ(remembered.exit_code, 0) << remembered.err;
  EXPECT_NE(remembered.err.find(skipped), std::string::npos) << remembered.err;
}

// exec is answered by the front from the start record the install wrote
// (install/recorded_environment.hpp): a value edited into the record is what
// the application gets, so neither the manifest nor the full command line
// was asked. A record that no longer parses leaves it to the full
// computation, and the next install writes the record again.
TEST_F(RuntimeCli, ExecReadsTheStartRecord)
{
  const auto root = dir.path() / "root";
  fs::path start;
  std::string recorded;
  const auto install = install_recorded(root, start, recorded);
  const auto pocl = (test::current_version(root) / "pocl").string();
  const auto line = "set POCL_CACHE_DIR " + pocl + "\n";
  ASSERT_NE(recorded.find(line), std::string::npos) << recorded;

  std::string edited = recorded;
  edited.replace(edited.find(line), line.size(), "set POCL_CACHE_DIR /prewarm-test-from-the-record\n");
  ASSERT_TRUE(write_file_atomic(start, edited));
  const std::string print = " -- sh -c 'echo \"$POCL_CACHE_DIR\"'";
  auto from_record = runtime(dir.path(), "exec --root " + root.string() + print);
  EXPECT_EQ(from_record.exit_code, 0) << from_record.err;
  EXPECT_EQ(from_record.out, "/prewarm-test-from-the-record\n");
  // Both spellings of its options.
  auto spelled = runtime(dir.path(), "exec --paths version --root=" + root.string() + print);
  EXPECT_EQ(spelled.out, "/prewarm-test-from-the-record\n");

  ASSERT_TRUE(write_file_atomic(start, edited.substr(0, edited.size() - 1)));
  auto computed = runtime(dir.path(), "exec --root " + root.string() + print);
  EXPECT_EQ(computed.exit_code, 0) << computed.err;
  EXPECT_EQ(computed.out, pocl + "\n");

  auto again = runtime(dir.path(), install, host_env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(slurp(start), recorded);
}

// env (shell format) is answered by the front from the same record: what an
// entrypoint evals costs what exec costs. JSON, and a record that no longer
// parses, are the full command line's: there the installed value shows.
TEST_F(RuntimeCli, EnvReadsTheStartRecord)
{
  const auto root = dir.path() / "root";
  fs::path start;
  std::string recorded;
  const auto install = install_recorded(root, start, recorded);
  const auto pocl = (test::current_version(root) / "pocl").string();
  const auto line = "set POCL_CACHE_DIR " + pocl + "\n";
  ASSERT_NE(recorded.find(line), std::string::npos) << recorded;
  std::string edited = recorded;
  edited.replace(edited.find(line), line.size(), "set POCL_CACHE_DIR /prewarm-test-it's-the-record\n");
  ASSERT_TRUE(write_file_atomic(start, edited));

  auto from_record = runtime(dir.path(), "env --root " + root.string());
  ASSERT_EQ(from_record.exit_code, 0) << from_record.err;
  EXPECT_NE(from_record.out.find("export POCL_CACHE_DIR='/prewarm-test-it'\\''s-the-record'\n"), std::string::npos)
    << from_record.out;
  EXPECT_NE(from_record.out.find("export PREWARM_ROOT='" + root.string() + "'\n"), std::string::npos)
    << from_record.out;
  auto spelled = runtime(dir.path(), "env --format=sh --paths version --root=" + root.string());
  EXPECT_EQ(spelled.out, from_record.out);

  auto json = runtime(dir.path(), "env --format json --root " + root.string());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"POCL_CACHE_DIR\": \"" + pocl + "\""), std::string::npos) << json.out;

  ASSERT_TRUE(write_file_atomic(start, edited.substr(0, edited.size() - 1)));
  auto computed = runtime(dir.path(), "env --root " + root.string());
  ASSERT_EQ(computed.exit_code, 0) << computed.err;
  EXPECT_NE(computed.out.find("export POCL_CACHE_DIR='" + pocl + "'\n"), std::string::npos) << computed.out;
  auto usage = runtime(dir.path(), "env --root " + root.string() + " --colour red");
  EXPECT_NE(usage.exit_code, 0); // the full command line's usage error, not the front's silence
  EXPECT_NE(usage.err.find("colour"), std::string::npos) << usage.err;
}

// A repeated install is answered by the start record: what it records (here a
// refusal edited into it) is what the install reports. Under a record of
// another policy (its digest differs) the full path judges the manifest and
// records the policy of now.
TEST_F(RuntimeCli, RepeatedInstallReadsTheStartRecord)
{
  const auto root = dir.path() / "root";
  fs::path start;
  std::string recorded;
  const auto install = install_recorded(root, start, recorded);
  const auto root_line = recorded.find("\nroot ");
  ASSERT_NE(root_line, std::string::npos) << recorded;

  std::string edited = recorded;
  edited.insert(root_line + 1, "refused prewarm-test-from-the-record\n");
  ASSERT_TRUE(write_file_atomic(start, edited));
  auto answered = runtime(dir.path(), install, host_env);
  ASSERT_EQ(answered.exit_code, 0) << answered.err;
  EXPECT_NE(answered.out.find("already installed"), std::string::npos) << answered.out;
  EXPECT_NE(answered.err.find("prewarm-test-from-the-record"), std::string::npos) << answered.err;

  const auto policy = edited.find("\npolicy ");
  ASSERT_NE(policy, std::string::npos);
  edited.replace(policy + 8, 64, std::string(64, 'f'));
  ASSERT_TRUE(write_file_atomic(start, edited));
  auto judged = runtime(dir.path(), install, host_env);
  ASSERT_EQ(judged.exit_code, 0) << judged.err;
  EXPECT_NE(judged.out.find("already installed"), std::string::npos) << judged.out;
  EXPECT_EQ(judged.err.find("prewarm-test-from-the-record"), std::string::npos) << judged.err;
  EXPECT_EQ(slurp(start), recorded);
}

// An install from a directory, first and repeated, never loads libcurl: an
// image without the package installs such bundles (registry/curl_library.hpp).
// The dynamic loader's own trace is the independent witness.
TEST_F(RuntimeCli, InstallFromADirectoryNeverLoadsLibcurl)
{
  const auto root = dir.path() / "root";
  const auto install =
    "install " + good_bundle().string() + " --trust " + pub.string() + " --root " + root.string();
  for (const char* which : {"first", "repeated"}) {
    const auto run = runtime(dir.path(), install, host_env + " LD_DEBUG=libs");
    ASSERT_EQ(run.exit_code, 0) << which << ": " << run.err;
    EXPECT_NE(run.err.find("libcrypto.so"), std::string::npos) << which << ": the trace names what is loaded";
    EXPECT_EQ(run.err.find("libcurl"), std::string::npos) << which << ": " << run.err.substr(0, 4000);
  }
}

// The binaries that ship in production images carry no signing or builder
// code (minisign's verify-only build): no prewarm::pack symbol, no signing or
// key generation entry point of OpenSSL.
TEST(RuntimeBinary, HasNoSigningOrBuilderCode)
{
  auto dir = scratch();
  for (const char* binary : {PREWARM_RUNTIME_FULL_BINARY, PREWARM_RUNTIME_BINARY}) {
    const auto symbols = dir.path() / "symbols";
    ASSERT_EQ(std::system(("nm -C " + std::string(binary) + " > " + symbols.string()).c_str()), 0);
    const auto text = read_file(symbols.string(), std::uint64_t{1} << 30);
    ASSERT_TRUE(text);
    EXPECT_GT(text->size(), 1000u);
    if (std::string_view(binary) == PREWARM_RUNTIME_FULL_BINARY) {
      EXPECT_NE(text->find("prewarm::bundle::verified_signers"), std::string::npos); // the check can see symbols
    }
    for (const char* forbidden : {"prewarm::pack::", "prewarm::bundle_build::", "prewarm::engine::", "EVP_DigestSign",
                                  "EVP_PKEY_keygen"}) {
      EXPECT_EQ(text->find(forbidden), std::string::npos) << binary << ": " << forbidden;
    }
  }
}

namespace {

// The libraries BINARY names (its NEEDED entries, as readelf shows them):
// what the dynamic loader maps at every start, whatever the command.
std::string
needed_libraries(const char* binary)
{
  auto dir = scratch();
  const auto dynamic = dir.path() / "dynamic";
  EXPECT_EQ(std::system(("readelf -d " + std::string(binary) + " > " + dynamic.string()).c_str()), 0);
  return read_file(dynamic.string()).value_or("");
}

} // namespace

// The full command line answers a repeated install at container start: it
// loads libcurl (and the TLS, HTTP/2, Kerberos and LDAP libraries it brings)
// only when it talks to a registry (registry/curl_library.hpp).
TEST(RuntimeBinary, FullCommandLineLoadsNoRegistryLibraryAtStart)
{
  const auto text = needed_libraries(PREWARM_RUNTIME_FULL_BINARY);
  EXPECT_NE(text.find("[libcrypto.so"), std::string::npos) << text; // the check reads NEEDED entries
  for (const char* heavy : {"libcurl", "libssl", "libnghttp", "libgnutls", "libgssapi", "libldap"}) {
    EXPECT_EQ(text.find(heavy), std::string::npos) << heavy << " in\n" << text;
  }
}

// What a container start runs (the front, cli/front/main.cpp) needs the C and C++
// runtime and fmt only: no archive, compression, registry (libcurl), TLS,
// YAML or device library is even mapped.
TEST(RuntimeBinary, FrontNeedsNoArchiveRegistryOrTlsLibrary)
{
  const auto text = needed_libraries(PREWARM_RUNTIME_BINARY);
  EXPECT_NE(text.find("[libc.so"), std::string::npos) << text; // the check reads NEEDED entries
  for (const char* heavy : {"libcurl", "libarchive", "libzstd", "libssl", "libcrypto", "libyaml", "libOpenCL",
                            "libze_loader", "libnghttp"}) {
    EXPECT_EQ(text.find(heavy), std::string::npos) << heavy << " in\n" << text;
  }
}

// A cache carried as a flag inside the application's own variable
// (PYTENSOR_FLAGS "...,base_compiledir=DIR"): env and exec merge it into the
// value the caller has, keeping its other flags and replacing its own
// base_compiledir with a warning. The install records no environment for
// the front (it depends on the caller's), so both go the full way.
TEST_F(RuntimeCli, EnvAndExecMergeACacheFlagIntoTheCallersValue)
{
  const auto root = dir.path() / "root";
  BundleFactory::SliceSpec slice{"cpu", {{"custom/pytensor/compiledir_x/mod.so", "module"}}, requires_cpu()};
  slice.caches = {{"pytensor", "PYTENSOR_FLAGS", bundle::CacheFlag{"base_compiledir", bundle::FlagSeparator::comma}}};
  const auto bundle = factory.write("flags", 1, {slice});
  const auto installed = runtime(
    dir.path(), "install " + bundle.string() + " --trust " + pub.string() + " --root " + root.string(), host_env);
  ASSERT_EQ(installed.exit_code, 0) << installed.err;
  EXPECT_NE(slurp(test::current_version(root) / ".start").find("environment at-exec\n"), std::string::npos);
  const auto dir_of_cache = (test::current_version(root) / "custom/pytensor").string();

  auto unset = runtime(dir.path(), "env --root " + root.string(), "env -u PYTENSOR_FLAGS");
  ASSERT_EQ(unset.exit_code, 0) << unset.err;
  EXPECT_NE(unset.out.find("export PYTENSOR_FLAGS='base_compiledir=" + dir_of_cache + "'\n"), std::string::npos)
    << unset.out;

  auto merged = runtime(dir.path(), "env --root " + root.string(), "PYTENSOR_FLAGS=floatX=float32,mode=FAST_RUN");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_NE(
    merged.out.find("export PYTENSOR_FLAGS='floatX=float32,mode=FAST_RUN,base_compiledir=" + dir_of_cache + "'\n"),
    std::string::npos)
    << merged.out;
  EXPECT_EQ(merged.err.find("replaced"), std::string::npos) << merged.err;

  auto own = runtime(dir.path(), "exec --root " + root.string() + " -- sh -c 'echo \"$PYTENSOR_FLAGS\"'",
                     "PYTENSOR_FLAGS=base_compiledir=/home/me/pt,floatX=float32");
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.out, "floatX=float32,base_compiledir=" + dir_of_cache + "\n");
  EXPECT_NE(own.err.find("the application's PYTENSOR_FLAGS held base_compiledir=/home/me/pt, replaced by the "
                         "installed cache's base_compiledir="),
            std::string::npos)
    << own.err;
}
