// SPDX-License-Identifier: Apache-2.0
// Every system call of `install` and `exec`, failing in turn.
//
// The calls are enumerated first (strace -f, per system call the most
// invocations any one thread made; strace counts injections per syscall and
// per tracee). Then each (syscall, invocation N) pair is run with strace
// -e inject=SYSCALL:error=E:when=N for E in EIO, ENOSPC, EAGAIN, EINTR, ENOMEM
// (the ones that make sense for that call) and with signal=KILL, and after
// every run:
//   - exec starts the application (a trivial one that prints a token);
//   - the root holds the old install or the new one, file digests compared
//     with both; a kill between two kinds' swaps may leave a mix on disk, but
//     then `status` must fail naming the interrupted install and `env` must
//     export nothing;
//   - `status` tells the truth: exit 0 only when the serial it reports is the
//     one whose files are there;
//   - the next install succeeds and leaves the new install.
// exec runs with its own faults too (only the invocations before its execve
// of the application, which is what the runtime does): the application must
// start whatever fails, unless the fault hit that execve itself.
//
// Budget: CI runs a deterministic sample (every k-th run of the full list,
// offset by a seed printed in the log: PREWARM_FAULT_SEED=N repeats one);
// PREWARM_FAULT_SWEEP=full runs all of them (ctest label `slow`:
// security/fault_sweep_full).
#include "security_support.hpp"

#include "install/install_layout.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace prewarm;
using namespace prewarm::security_test;

namespace {

constexpr const char* k_token = "test_only_app_started";

struct Fault
{
  std::string syscall;
  int when = 0;
  std::string what; // "EIO"... or "KILL"
};

struct CallCounts
{
  std::map<std::string, int> calls;    // system call -> most invocations by one tracee
  std::map<std::string, int> pre_main; // of those, made by the dynamic loader (first tracee)
};

// From `strace -f -o`. With `stop_at_second_execve`, only what happens
// before the second execve of the traced process (exec: the runtime, not
// the application), and only in that process: the exec sweep injects without
// -f, and strace counts a tracee's calls across its execve, so a fault numbered
// past the runtime's own calls (a forked probe child makes more mmaps than its
// parent) would land in the application's loader instead of the runtime. The loader's calls end with the first call after rseq
// that is not mprotect/prlimit64/munmap (glibc 2.36: TLS set up, RELRO
// protected, ld.so.cache unmapped): a fault there is the loader's, and it
// is counted apart.
CallCounts
count_calls(const fs::path& trace, bool stop_at_second_execve)
{
  CallCounts counts;
  std::string first_pid;
  bool seen_rseq = false;
  bool in_main = false;
  std::map<std::pair<std::string, std::string>, int> per_tracee;
  std::ifstream in(trace);
  std::string line;
  int execs = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string pid;
    std::string rest;
    words >> pid;
    std::getline(words, rest);
    const auto start = rest.find_first_not_of(' ');
    if (start == std::string::npos) {
      continue;
    }
    rest = rest.substr(start);
    if (rest.starts_with("<...") || rest.starts_with("+++") || rest.starts_with("---")) {
      continue;
    }
    const auto paren = rest.find('(');
    if (paren == std::string::npos || paren == 0) {
      continue;
    }
    const auto name = rest.substr(0, paren);
    if (!std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; })) {
      continue;
    }
    if (first_pid.empty()) {
      first_pid = pid;
    }
    if (pid == first_pid && !in_main) {
      if (seen_rseq && name != "mprotect" && name != "prlimit64" && name != "munmap") {
        in_main = true;
      } else {
        seen_rseq = seen_rseq || name == "rseq";
        counts.pre_main[name] += 1;
      }
    }
    if (stop_at_second_execve && pid != first_pid) {
      continue;
    }
    if (name == "execve" && stop_at_second_execve && ++execs == 2) {
      per_tracee[{pid, name}] += 1; // the application's execve: can be failed too
      break;
    }
    per_tracee[{pid, name}] += 1;
  }
  for (const auto& [key, n] : per_tracee) {
    counts.calls[key.second] = std::max(counts.calls[key.second], n);
  }
  return counts;
}

// Whether the fault strace injected landed after the application's execve:
// the enumeration counts the runtime's calls in one run, but a later run can
// make fewer (malloc arenas, thread stacks), and strace numbers a tracee's
// calls across its execve, so invocation N may then be the application's.
// Such a fault is the application's own, not the runtime's.
bool
injected_after_handover(const fs::path& trace)
{
  std::ifstream in(trace);
  std::string line;
  int execs = 0;
  while (std::getline(in, line)) {
    if (line.starts_with("execve(") && line.find(" = 0") != std::string::npos) {
      ++execs;
    }
    if (line.find("(INJECTED)") != std::string::npos) {
      return execs >= 2;
    }
  }
  return false;
}

// Calls whose failure cannot be modelled: glibc retries a failed exit
// forever, and a failed sigreturn corrupts the process by design.
bool
excluded(const std::string& syscall)
{
  return syscall == "exit_group" || syscall == "exit" || syscall == "rt_sigreturn";
}

// The errors that make sense for a call: every call can fail with EIO under
// a sick disk in this sweep's model, ENOSPC only where it writes, EINTR only
// where it may block, ENOMEM and EAGAIN everywhere the kernel allocates.
std::vector<std::string>
errors_for(const std::string& syscall)
{
  static const std::set<std::string> writes = {"write", "pwrite64", "writev", "fsync", "fdatasync", "syncfs",
                                               "mkdir", "mkdirat", "openat", "rename", "renameat", "renameat2",
                                               "linkat", "fchmod", "fchown", "fchownat", "ftruncate", "fallocate",
                                               "sync_file_range"};
  static const std::set<std::string> blocking = {"read", "pread64", "write", "pwrite64", "openat", "flock",
                                                 "fsync", "syncfs", "futex", "wait4", "clock_nanosleep", "nanosleep",
                                                 "fdatasync", "poll", "ppoll"};
  // Calls the kernel never fails with an errno: brk reports failure by
  // returning the old break (glibc would take -EIO for a break address), the
  // id getters cannot fail. futex: glibc aborts by design on an error the
  // kernel does not return for that operation (EIO, EAGAIN on a wake), and
  // prewarm never calls it itself. Only the kill applies to them.
  static const std::set<std::string> never_fail = {"brk", "getpid", "gettid", "getppid", "getuid", "geteuid",
                                                   "getgid", "getegid", "umask", "set_tid_address", "futex"};
  if (never_fail.contains(syscall)) {
    return {"KILL"};
  }
  std::vector<std::string> out = {"EIO", "EAGAIN", "ENOMEM"};
  if (writes.contains(syscall)) {
    out.push_back("ENOSPC");
  }
  if (blocking.contains(syscall)) {
    out.push_back("EINTR");
  }
  out.push_back("KILL");
  return out;
}

std::string
inject_option(const Fault& f)
{
  return "-e inject=" + f.syscall + (f.what == "KILL" ? ":signal=KILL" : ":error=" + f.what) +
         ":when=" + std::to_string(f.when);
}

// "serial N" from status output, or -1.
int
reported_serial(const std::string& text)
{
  const auto at = text.find(" serial ");
  return at == std::string::npos ? -1 : std::atoi(text.c_str() + at + 8);
}

} // namespace

class FaultSweep : public Security
{
protected:
  void SetUp() override
  {
    Security::SetUp();
    if (!have_tool("strace")) {
      GTEST_SKIP() << "strace not installed";
    }
    // Two kinds, many files: faults land in extraction, both swaps and the
    // records.
    for (int i = 0; i < 24; ++i) {
      old_files["pocl/p" + std::to_string(i % 4) + "/k" + std::to_string(i)] = "old pocl " + std::to_string(i);
      new_files["pocl/p" + std::to_string(i % 4) + "/k" + std::to_string(i)] = std::string(700 + i, 'n');
      old_files["triton/t" + std::to_string(i % 3) + "/k" + std::to_string(i)] = "old triton " + std::to_string(i);
      new_files["triton/t" + std::to_string(i % 3) + "/k" + std::to_string(i)] = std::string(900 + i, 'T');
    }
    old_bundle = factory->write("sweep-old", 11, {{"cpu", old_files, test::requires_cpu()}});
    new_bundle = factory->write("sweep-new", 12, {{"cpu", new_files, test::requires_cpu()}});
    test::write_tree(dir.path() / "expect-old", old_files);
    test::write_tree(dir.path() / "expect-new", new_files);
    for (const auto* kind : {"pocl", "triton"}) {
      old_hash[kind] = test::tree_hash(dir.path() / "expect-old" / kind);
      new_hash[kind] = test::tree_hash(dir.path() / "expect-new" / kind);
    }
    pristine = dir.path() / "pristine";
    fs::remove_all(root);
    ASSERT_EQ(install(old_bundle).exit_code, 0);
    fs::copy(root, pristine, fs::copy_options::recursive);
  }

  void reset_root()
  {
    fs::remove_all(root);
    fs::copy(pristine, root, fs::copy_options::recursive);
  }

  std::string runtime() const { return host_env + " timeout -s KILL 30 " PREWARM_RUNTIME_BINARY; }
  std::string install_args() const
  {
    return " install " + new_bundle.string() + " --trust " + pub.string() + " --root " + root.string();
  }
  std::string exec_args() const { return " exec --root " + root.string() + " -- /bin/echo " + k_token; }

  // "old", "new" or "mixed" (per-kind digests against both installs), of
  // the version the marker names: what env/exec give an application
  // (ROOT/<kind> are links re-pointed after the switch, install_layout.hpp).
  std::string root_state()
  {
    bool all_old = true;
    bool all_new = true;
    const auto version = test::current_version(root);
    for (const auto* kind : {"pocl", "triton"}) {
      const auto h = test::tree_hash((version.empty() ? root : version) / kind);
      all_old = all_old && h == old_hash[kind];
      all_new = all_new && h == new_hash[kind];
    }
    return all_old ? "old" : all_new ? "new" : "mixed";
  }

  // The checks after one faulty run; the outcome for the counts.
  std::string check_after(const Fault& fault, const Outcome& run, bool exec_run)
  {
    SCOPED_TRACE(fault.syscall + "#" + std::to_string(fault.when) + " " + fault.what + (exec_run ? " (exec)" : ""));
    EXPECT_NE(run.exit_code, 124) << "hung";
    std::string outcome;
    // ld.so's own messages: a library it cannot load, or a bare "out of
    // memory" (exit 127) when an allocation of its own fails after RELRO,
    // which the pre-main count above cannot tell from the program's calls.
    const bool loader = run.err.find("error while loading shared libraries") != std::string::npos ||
                        (run.exit_code == 127 && run.err == "out of memory\n");
    if (exec_run) {
      const bool hit_app_exec = fault.syscall == "execve";
      if (fault.syscall == "execve" && fault.when == 1) {
        outcome = "the runtime's own execve failed (before it runs)";
      } else if (fault.what == "KILL") {
        outcome = "killed";
      } else if (run.exit_code == 0 && run.out == std::string(k_token) + "\n") {
        outcome = "app started";
      } else if (loader) {
        outcome = "loader failed (before main)";
      } else if (hit_app_exec && (run.exit_code == 126 || run.exit_code == 127)) {
        outcome = "app's execve failed, said so";
        EXPECT_NE(run.err.find("cannot run"), std::string::npos) << run.err;
      } else {
        outcome = "APP NOT STARTED";
        ADD_FAILURE() << "exec did not start the application: exit " << run.exit_code << "\n" << run.err;
      }
    } else {
      outcome = run.exit_code == 0 ? "installed" : fault.what == "KILL" ? "killed" : loader ? "loader failed (before main)" : "refused (exit " + std::to_string(run.exit_code) + ")";
    }
    const auto state = root_state();
    const bool interrupted = fs::exists(install::meta_dir(root) / install::k_committing_file);
    const auto status = run_shell(work, runtime() + " status --root " + root.string());
    if (state == "mixed") {
      EXPECT_EQ(fault.what, "KILL") << "a fault that was not a kill left a mixed root";
      EXPECT_TRUE(interrupted) << "a mixed root without the committing note";
      EXPECT_NE(status.exit_code, 0) << "status calls a mixed root fine:\n" << status.out;
      const auto env = run_shell(work, runtime() + " env --root " + root.string());
      EXPECT_NE(env.exit_code, 0);
      EXPECT_EQ(env.out, "") << "env exported a mixed root";
      outcome += ", mixed (reported)";
    } else if (status.exit_code == 0) {
      EXPECT_EQ(reported_serial(status.out), state == "old" ? 11 : 12) << "status reports another serial than the "
                                                                          "files that are there:\n"
                                                                       << status.out;
      outcome += ", " + state;
    } else {
      outcome += ", " + state + " (status exit " + std::to_string(status.exit_code) + ")";
    }
    const auto app = run_shell(work, runtime() + exec_args());
    EXPECT_EQ(app.exit_code, 0) << app.err;
    EXPECT_EQ(app.out, std::string(k_token) + "\n");
    const auto next = run_shell(work, runtime() + install_args());
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_EQ(root_state(), "new");
    const auto healed = run_shell(work, runtime() + " status --root " + root.string());
    EXPECT_EQ(healed.exit_code, 0) << healed.out << healed.err;
    EXPECT_EQ(reported_serial(healed.out), 12);
    return outcome;
  }

  std::vector<Fault> faults_of(const CallCounts& counts)
  {
    std::vector<Fault> out;
    for (const auto& [syscall, n] : counts.calls) {
      if (excluded(syscall)) {
        continue;
      }
      const auto loader = counts.pre_main.find(syscall);
      for (int when = 1; when <= n; ++when) {
        if (loader != counts.pre_main.end() && when <= loader->second) {
          ++loader_faults;
          continue; // the dynamic loader's, before any of prewarm's code runs
        }
        for (const auto& what : errors_for(syscall)) {
          out.push_back({syscall, when, what});
        }
      }
    }
    return out;
  }

  int loader_faults = 0;
  Files old_files;
  Files new_files;
  fs::path old_bundle;
  fs::path new_bundle;
  fs::path pristine;
  std::map<std::string, std::string> old_hash;
  std::map<std::string, std::string> new_hash;
};

TEST_F(FaultSweep, EverySystemCallOfInstallAndExecFailsInTurn)
{
  // Enumerate.
  const auto install_trace = work / "install.trace";
  const auto exec_trace = work / "exec.trace";
  reset_root();
  ASSERT_EQ(run_shell(work, host_env + " strace -f -qq -o " + install_trace.string() + " " PREWARM_RUNTIME_BINARY +
                              install_args())
              .exit_code,
            0);
  ASSERT_EQ(root_state(), "new");
  ASSERT_EQ(run_shell(work, host_env + " strace -f -qq -o " + exec_trace.string() + " " PREWARM_RUNTIME_BINARY +
                              exec_args())
              .exit_code,
            0);
  const auto install_calls = count_calls(install_trace, false);
  const auto exec_calls = count_calls(exec_trace, true);
  auto install_faults = faults_of(install_calls);
  auto exec_faults = faults_of(exec_calls);

  const char* mode = std::getenv("PREWARM_FAULT_SWEEP");
  const bool full = mode != nullptr && std::string(mode) == "full";
  const char* seed_text = std::getenv("PREWARM_FAULT_SEED");
  const unsigned seed = seed_text != nullptr
                          ? static_cast<unsigned>(std::strtoul(seed_text, nullptr, 10))
                          : static_cast<unsigned>(std::chrono::system_clock::now().time_since_epoch().count() % 100000);
  // About 120 install runs and 40 exec runs in CI (~2.5 minutes here).
  std::map<std::string, int> outcomes;
  int injected = 0;
  // PREWARM_FAULT_ONLY=SYSCALL:N:WHAT runs that one fault (install and exec).
  if (const char* only = std::getenv("PREWARM_FAULT_ONLY")) {
    const std::string text(only);
    const auto a = text.find(':');
    const auto b = text.find(':', a + 1);
    const Fault f{text.substr(0, a), std::atoi(text.substr(a + 1, b - a - 1).c_str()), text.substr(b + 1)};
    install_faults = {f};
    exec_faults = {f};
  }
  const std::size_t install_step = full || install_faults.size() == 1 ? 1 : std::max<std::size_t>(1, install_faults.size() / 120);
  const std::size_t exec_step = full || exec_faults.size() == 1 ? 1 : std::max<std::size_t>(1, exec_faults.size() / 40);
  std::cout << "fault sweep: " << (full ? "full" : "sample") << ", seed " << seed
            << " (PREWARM_FAULT_SEED=" << seed << " repeats it); install: " << install_calls.calls.size()
            << " system calls, " << install_faults.size() << " faults, every " << install_step
            << "th; exec: " << exec_calls.calls.size() << " system calls, " << exec_faults.size() << " faults, every "
            << exec_step << "th; not injected: " << loader_faults
            << " invocations made by the dynamic loader before main, and exit_group/rt_sigreturn\n";
  for (std::size_t i = seed % install_step; i < install_faults.size(); i += install_step) {
    const auto& f = install_faults[i];
    reset_root();
    const auto run = run_shell(work, host_env + " timeout -s KILL 30 strace -f -qq -o /dev/null " + inject_option(f) +
                                       " " PREWARM_RUNTIME_BINARY + install_args());
    ++injected;
    ++outcomes["install: " + check_after(f, run, false)];
    if (run.exit_code > 128 && f.what != "KILL") {
      std::cout << "died of signal " << run.exit_code - 128 << " at install " << f.syscall << " #" << f.when << " "
                << f.what << ": " << run.err.substr(0, 300) << "\n";
    }
    if (HasFailure()) {
      std::cout << "FAILED at install " << f.syscall << " #" << f.when << " " << f.what << " (seed " << seed
                << "); the faulty run said:\n" << run.out << run.err << "\n";
      break;
    }
  }
  for (std::size_t i = seed % exec_step; i < exec_faults.size() && !HasFailure(); i += exec_step) {
    const auto& f = exec_faults[i];
    reset_root();
    const auto trace = work / "exec-inject.trace";
    const auto run = run_shell(work, host_env + " timeout -s KILL 30 strace -qq -o " + trace.string() + " " +
                                       inject_option(f) + " " PREWARM_RUNTIME_BINARY + exec_args());
    ++injected;
    if (run.exit_code != 0 && injected_after_handover(trace)) {
      ++outcomes["exec: fault landed in the application after the hand-over (not the runtime's)"];
      continue;
    }
    ++outcomes["exec: " + check_after(f, run, true)];
    if (HasFailure()) {
      std::cout << "FAILED at exec " << f.syscall << " #" << f.when << " " << f.what << " (seed " << seed << ")\n";
    }
  }
  std::cout << "fault sweep: " << injected << " faults injected\n";
  for (const auto& [what, n] : outcomes) {
    std::cout << "  " << n << "  " << what << "\n";
  }
  RecordProperty("install_syscalls", static_cast<int>(install_calls.calls.size()));
  RecordProperty("exec_syscalls", static_cast<int>(exec_calls.calls.size()));
  RecordProperty("injected", injected);
  EXPECT_GT(injected, 0);
}
