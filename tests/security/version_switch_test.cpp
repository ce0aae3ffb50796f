// SPDX-License-Identifier: Apache-2.0
// One bundle per application (install_layout.hpp: versions and one switch),
// on the real prewarm-runtime binary:
//   V1  starts during installs: applications started through `exec` while
//       installs of two bundles alternate read a file of each of two kinds,
//       sleep, and read the first again; all three must come from one
//       bundle, and every start must get caches. CI runs a sample
//       (PREWARM_START_RACE_STARTS, default 400); security/start_race_full
//       (label slow) runs 5,000.
//   V2  kill -9 at every step of the versioned switch (strace signal
//       injection into each system call the install makes, at several
//       invocations): what `env` then gives an application is the old bundle
//       or the new one, never kinds of both, and never nothing.
//   V3  `exec --audit` as PID 1 of a PID namespace (unshare) reaps the five
//       grandchildren orphaned to it: no zombie, and the main child's exit
//       status is exec's.
//   V4  private copies (another user, setpriv): a base that others may write
//       and is not sticky is refused; a copy is made from the signed file
//       list only (a file added to the installed tree is left out, a listed
//       file changed there is refused); a start for a newer version does not
//       remove the copy a running application of the same user still uses.
#include "security_support.hpp"

#include "install/install_layout.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

using namespace prewarm;
using namespace prewarm::security_test;

namespace {

// Two kinds whose files name their bundle: a reader that mixes versions
// prints two different names.
Files
tagged_files(const std::string& tag)
{
  return {{"pocl/aa/kernel.bin", tag}, {"programs/00/p.bin", tag}, {"pocl/bb/pad.bin", std::string(4000, 'p')}};
}

int
env_int(const char* name, int fallback)
{
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

constexpr const char* k_reader =
  R"(sh -c 'a=$(cat "$POCL_CACHE_DIR/aa/kernel.bin" 2>/dev/null || echo none); )"
  R"(b=$(cat "$PREWARM_PROGRAM_STORE/00/p.bin" 2>/dev/null || echo none); sleep 0.01; )"
  R"(c=$(cat "$POCL_CACHE_DIR/aa/kernel.bin" 2>/dev/null || echo none); echo "$a $b $c"')";

// The environment `env --format json` gives, as NAME -> value.
std::map<std::string, std::string>
parse_env_json(const std::string& json)
{
  std::map<std::string, std::string> out;
  std::istringstream in(json);
  std::string line;
  while (std::getline(in, line)) {
    const auto q1 = line.find('"');
    const auto q2 = line.find('"', q1 + 1);
    const auto q3 = line.find('"', q2 + 1);
    const auto q4 = line.rfind('"');
    if (q1 != std::string::npos && q3 != std::string::npos && q4 > q3) {
      out[line.substr(q1 + 1, q2 - q1 - 1)] = line.substr(q3 + 1, q4 - q3 - 1);
    }
  }
  return out;
}

} // namespace

class VersionSwitch : public Security
{
protected:
  void SetUp() override
  {
    Security::SetUp();
    bundle_a = factory->write("tag-a", 1, {{"cpu", tagged_files("A"), test::requires_cpu()}}, nullptr, "race/a");
    bundle_b = factory->write("tag-b", 1, {{"cpu", tagged_files("B"), test::requires_cpu()}}, nullptr, "race/b");
    fs::remove_all(root);
    ASSERT_EQ(install(bundle_a, "--replace-channel").exit_code, 0);
  }

  fs::path bundle_a;
  fs::path bundle_b;
};

TEST_F(VersionSwitch, V1_StartsDuringInstallsSeeOneBundleEach)
{
  const int starts = env_int("PREWARM_START_RACE_STARTS", 400);
  const auto installs = work / "installs";
  const auto stop = work / "stop";
  // Installs alternate between two channels (--replace-channel): each one is
  // a full switch, and the rollback guard allows them again and again.
  const auto install_cmd = [&](const fs::path& bundle) {
    return fmt::format("{} {} install {} --trust {} --root {} --replace-channel >/dev/null 2>>{}", host_env,
                       PREWARM_RUNTIME_BINARY, bundle.string(), pub.string(), root.string(),
                       (work / "install.err").string());
  };
  const auto script = fmt::format(
    "( n=0; while [ ! -e {stop} ]; do {a} && n=$((n+1)); {b} && n=$((n+1)); done; echo $n > {installs} ) &\n"
    "seq {starts} | xargs -P 8 -I@ {runtime} exec --root {root} -- {reader} > {out} 2>{err}\n"
    "touch {stop}; wait\n",
    fmt::arg("stop", stop.string()), fmt::arg("a", install_cmd(bundle_b)), fmt::arg("b", install_cmd(bundle_a)),
    fmt::arg("installs", installs.string()), fmt::arg("starts", starts), fmt::arg("runtime", PREWARM_RUNTIME_BINARY),
    fmt::arg("root", root.string()), fmt::arg("reader", k_reader), fmt::arg("out", (work / "starts.out").string()),
    fmt::arg("err", (work / "starts.err").string()));
  const auto began = std::chrono::steady_clock::now();
  const auto run = run_shell(work, script);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  ASSERT_EQ(run.exit_code, 0) << run.err;

  std::istringstream lines(slurp(work / "starts.out"));
  std::string line;
  int total = 0;
  int mixed = 0;
  int without = 0;
  std::map<std::string, int> seen;
  while (std::getline(lines, line)) {
    ++total;
    std::istringstream words(line);
    std::string a, b, c;
    words >> a >> b >> c;
    if (a == "none" || b == "none" || c == "none") {
      ++without;
      ADD_FAILURE() << "a start without (some of) its caches: " << line;
    } else if (a != b || a != c) {
      ++mixed;
      ADD_FAILURE() << "a start saw two bundles: " << line;
    } else {
      ++seen[a];
    }
  }
  const int switches = std::atoi(slurp(installs).c_str());
  EXPECT_EQ(total, starts);
  EXPECT_EQ(mixed, 0);
  EXPECT_EQ(without, 0);
  EXPECT_GT(switches, 2) << "the installs must actually run beside the starts: " << slurp(work / "install.err");
  EXPECT_EQ(slurp(work / "starts.err").find("E_VERSION_MISSING"), std::string::npos) << slurp(work / "starts.err");
  RecordProperty("starts", total);
  RecordProperty("switches", switches);
  RecordProperty("mixed", mixed);
  RecordProperty("without_caches", without);
  std::cout << fmt::format("{} starts during {} installs in {:.1f} s: {} saw A, {} saw B, {} mixed, {} without caches\n",
                           total, switches, seconds, seen["A"], seen["B"], mixed, without);
  // Nothing piles up: every version but the current one is removed by the
  // next install once its applications have exited.
  ASSERT_EQ(install(bundle_b, "--replace-channel").exit_code, 0);
  ASSERT_EQ(install(bundle_a, "--replace-channel").exit_code, 0);
  int versions = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(install::versions_dir(root))) {
    ++versions;
  }
  EXPECT_EQ(versions, 1);
}

TEST_F(VersionSwitch, V2_KillNineAtEveryStepOfTheSwitchNeverMixes)
{
  if (!have_tool("strace")) {
    GTEST_SKIP() << "strace not installed";
  }
  const std::vector<std::pair<std::string, std::vector<int>>> steps = {
    {"mkdir", {1, 2, 3, 5}},          {"openat", {1, 5, 10, 20, 30, 40, 60}},
    {"write", {1, 2, 4, 6, 8}},       {"fsync", {1, 2, 3, 4, 5, 6}},
    {"syncfs", {1}},                  {"fchmod", {1, 2}},
    {"renameat2", {1, 2}},            {"rename", {1, 2, 3, 4, 5, 6}},
    {"renameat", {1, 2, 3}},          {"symlinkat", {1, 2}},
    {"unlinkat", {1, 2, 3, 5, 10}},   {"unlink", {1, 2}},
    {"flock", {1, 2, 3, 4}},          {"rmdir", {1, 2}},
  };
  int killed = 0;
  int mixed = 0;
  int empty = 0;
  std::map<std::string, int> after;
  for (const auto& [syscall, whens] : steps) {
    for (const int when : whens) {
      SCOPED_TRACE(syscall + " #" + std::to_string(when));
      const auto run = run_shell(work, host_env + " strace -f -qq -o /dev/null -e trace=" + syscall +
                                         " -e inject=" + syscall + ":signal=9:when=" + std::to_string(when) +
                                         " " PREWARM_RUNTIME_BINARY " install " + bundle_b.string() + " --trust " +
                                         pub.string() + " --root " + root.string() + " --replace-channel");
      killed += run.exit_code != 0;
      const auto env = run_shell(work, PREWARM_RUNTIME_BINARY " env --format json --root " + root.string());
      ASSERT_EQ(env.exit_code, 0) << "no bundle at all after the kill: " << env.err;
      const auto vars = parse_env_json(env.out);
      const auto pocl = slurp(fs::path(vars.at("POCL_CACHE_DIR")) / "aa/kernel.bin");
      const auto programs = slurp(fs::path(vars.at("PREWARM_PROGRAM_STORE")) / "00/p.bin");
      if (pocl.empty() || programs.empty()) {
        ++empty;
        ADD_FAILURE() << "caches missing: " << env.out;
      } else if (pocl != programs) {
        ++mixed;
        ADD_FAILURE() << "a mixed view: pocl " << pocl << ", programs " << programs;
      } else {
        ++after[pocl];
      }
      EXPECT_EQ(env.err.find("E_INTERRUPTED"), std::string::npos) << env.err;
      EXPECT_EQ(test::tree_hash(outside), outside_hash_before);
      // The next install of the old bundle recovers whatever state is left.
      const auto back = install(bundle_a, "--replace-channel");
      ASSERT_EQ(back.exit_code, 0) << back.err;
      ASSERT_EQ(slurp(root / "pocl/aa/kernel.bin"), "A");
    }
  }
  RecordProperty("killed", killed);
  RecordProperty("mixed", mixed);
  std::cout << fmt::format("kill -9 sweep: {} runs killed, {} left A current, {} left B current, {} mixed, {} empty\n",
                           killed, after["A"], after["B"], mixed, empty);
  EXPECT_GT(killed, 25) << "the injection points must actually hit the installer";
  EXPECT_GT(after["A"], 0);
  EXPECT_GT(after["B"], 0) << "some kills must land after the switch";
  EXPECT_EQ(mixed, 0);
  EXPECT_EQ(empty, 0);
}

TEST_F(VersionSwitch, V3_ExecAuditAsPidOneReapsOrphans)
{
  if (std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "cannot make a PID namespace here (unshare --pid needs privileges)";
  }
  // Five grandchildren orphaned to PID 1 (each subshell exits at once), which
  // end after 0.2 s; at 1.5 s the namespace is counted for zombies.
  const auto run = run_shell(
    work, "unshare --pid --fork --mount-proc " PREWARM_RUNTIME_BINARY " exec --root " + root.string() + " --audit " +
            (work / "audit.json").string() +
            " -- sh -c 'for i in 1 2 3 4 5; do (sleep 0.2 &); done; sleep 1.5; "
            "echo zombies=$(ps -eo stat= | grep -c ^Z); exit 7'");
  EXPECT_EQ(run.exit_code, 7) << run.err;
  EXPECT_NE(run.out.find("zombies=0"), std::string::npos) << run.out << run.err;
  EXPECT_TRUE(fs::exists(work / "audit.json"));
}

class PrivateCopies : public VersionSwitch
{
protected:
  void SetUp() override
  {
    if (::geteuid() != 0 || std::system("command -v setpriv >/dev/null") != 0) {
      GTEST_SKIP() << "needs root and setpriv to run as another user";
    }
    VersionSwitch::SetUp();
    for (const auto& p : {dir.path(), work}) {
      ::chmod(p.c_str(), 0755);
    }
    base = dir.path() / "nobody-tmp";
    fs::create_directories(base);
    ::chown(base.c_str(), 65534, 65534);
    ::chmod(base.c_str(), 0700);
  }

  // exec as nobody with TMPDIR=`tmp`, running `command`; stdout, stderr.
  Outcome as_nobody(const std::string& command, const fs::path& tmp)
  {
    return run_shell(work, "TMPDIR=" + tmp.string() +
                             " setpriv --reuid=65534 --regid=65534 --clear-groups " PREWARM_RUNTIME_BINARY
                             " exec --root " + root.string() + " -- sh -c '" + command + "'");
  }

  fs::path base;
};

TEST_F(PrivateCopies, V4_ABaseOthersMayWriteIsRefused)
{
  const auto open_base = dir.path() / "open-tmp";
  fs::create_directories(open_base);
  ::chmod(open_base.c_str(), 0777); // no sticky bit
  const auto run = as_nobody("echo \"pocl=${POCL_CACHE_DIR:-unset}\"", open_base);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("pocl=unset"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("writable by others and not sticky"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(open_base / "prewarm-65534"));
  ::chmod(open_base.c_str(), 01777); // sticky, as /tmp: fine
  const auto sticky = as_nobody("cat \"$POCL_CACHE_DIR/aa/kernel.bin\"", open_base);
  EXPECT_EQ(sticky.out, "A") << sticky.err;
}

TEST_F(PrivateCopies, V4_ACopyHoldsOnlyTheSignedFiles)
{
  // What the owner of an `install --owner` tree (here: root, who can write
  // it too) adds or changes in the installed version.
  const auto version = test::current_version(root);
  write_text(version / "pocl/aa/planted.so", "planted");
  write_text(version / "pocl/bb/pad.bin", std::string(4000, 'X'));
  const auto run = as_nobody("ls \"$POCL_CACHE_DIR/aa\" \"$POCL_CACHE_DIR/bb\"; cat \"$POCL_CACHE_DIR/aa/kernel.bin\"",
                             base);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("planted"), std::string::npos) << "an unsigned file reached the copy: " << run.out;
  EXPECT_EQ(run.out.find("pad.bin"), std::string::npos) << "a changed file reached the copy: " << run.out;
  EXPECT_TRUE(run.out.ends_with("A")) << run.out;
  EXPECT_NE(run.err.find("not as signed"), std::string::npos) << run.err;
}

TEST_F(PrivateCopies, V4_ANewerStartKeepsTheCopyARunningApplicationUses)
{
  // The first application holds its copy of version A for 3 s, reading it
  // again at the end; meanwhile B is installed and a second application of
  // the same user starts (a copy of B, and removal of copies nobody holds).
  const auto first = work / "first.out";
  const auto script = fmt::format(
    "TMPDIR={base} setpriv --reuid=65534 --regid=65534 --clear-groups {rt} exec --root {root} -- sh -c "
    "'cat \"$POCL_CACHE_DIR/aa/kernel.bin\"; sleep 3; cat \"$POCL_CACHE_DIR/aa/kernel.bin\" || echo GONE' > {first} "
    "2>/dev/null &\n"
    "sleep 1\n"
    "{install} >/dev/null 2>&1 || echo INSTALL FAILED\n"
    "TMPDIR={base} setpriv --reuid=65534 --regid=65534 --clear-groups {rt} exec --root {root} -- sh -c "
    "'cat \"$POCL_CACHE_DIR/aa/kernel.bin\"'\n"
    "wait\n",
    fmt::arg("base", base.string()), fmt::arg("rt", PREWARM_RUNTIME_BINARY), fmt::arg("root", root.string()),
    fmt::arg("first", first.string()),
    fmt::arg("install", host_env + " " + PREWARM_RUNTIME_BINARY + std::string(" install ") + bundle_b.string() +
                          " --trust " + pub.string() + " --root " + root.string() + " --replace-channel"));
  const auto run = run_shell(work, script);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "B") << run.err;
  EXPECT_EQ(slurp(first), "AA") << "the running application lost its copy";
  // Once it exited, the next start removes the copy of A.
  const auto later = as_nobody("true", base);
  int copies = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(base / "prewarm-65534")) {
    ++copies;
  }
  EXPECT_EQ(copies, 1);
}
