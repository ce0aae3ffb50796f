// SPDX-License-Identifier: Apache-2.0
#include "build/child_process.hpp"

#include "base/files.hpp"
#include "command/interruption.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <thread>

extern char** environ;

namespace prewarm::build {

Environment
current_environment()
{
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const auto eq = text.find('=');
    if (eq != std::string_view::npos && eq > 0) {
      env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
    }
  }
  return env;
}

std::string
ChildResult::describe() const
{
  if (timed_out) {
    return "timed out";
  }
  if (exit_code > 128) {
    return fmt::format("killed by signal {}", exit_code - 128);
  }
  return fmt::format("exited with status {}", exit_code);
}

Result<ChildResult>
run_child(const ChildSpec& spec)
{
  if (spec.argv.empty()) {
    return fail(Errc::internal, "run_child: empty argv");
  }
  const int log_fd = ::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", spec.log_file.string(), errno_message(errno)));
  }
  UniqueFd log(log_fd);

  std::vector<std::string> env_strings;
  for (const auto& [name, value] : spec.environment) {
    env_strings.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) {
    envp.push_back(s.data());
  }
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = spec.argv;
  std::vector<char*> argv;
  for (auto& a : argv_copy) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, log.get(), STDERR_FILENO);
  if (!spec.working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, spec.working_directory.c_str());
  }
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return fail(Errc::failed, fmt::format("cannot start {}: {}", spec.argv[0], errno_message(rc)));
  }

  ChildResult result;
  int status = 0;
  for (;;) {
    // Never a blocking wait: SIGTERM to the builder must be seen within 20 ms.
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      break;
    }
    if (done < 0 && errno != EINTR) {
      return fail(Errc::failed, fmt::format("waiting for {}: {}", spec.argv[0], errno_message(errno)));
    }
    if (command::interruption_signal() != 0) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return fail(command::interrupted_error(spec.argv[0]));
    }
    if (spec.timeout.count() > 0 && std::chrono::steady_clock::now() - start > spec.timeout && !result.timed_out) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    if (done == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

std::string
file_tail(const std::filesystem::path& path, std::size_t max_bytes)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return {};
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

Result<std::filesystem::path>
self_executable()
{
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot resolve /proc/self/exe: {}", ec.message()));
  }
  return path;
}

} // namespace prewarm::build
