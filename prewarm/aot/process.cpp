// SPDX-License-Identifier: Apache-2.0
#include "aot/process.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

extern char** environ;

namespace prewarm::aot {

namespace {

// posix_spawn_file_actions_t with a destructor, so every return path frees it.
class SpawnActions
{
public:
  SpawnActions() { m_ok = posix_spawn_file_actions_init(&m_actions) == 0; }
  ~SpawnActions()
  {
    if (m_ok) {
      posix_spawn_file_actions_destroy(&m_actions);
    }
  }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &m_actions; }
  bool ok() const { return m_ok; }

private:
  posix_spawn_file_actions_t m_actions{};
  bool m_ok = false;
};

} // namespace

Result<ProcessResult>
run_process(const std::vector<std::string>& argv, const std::filesystem::path& working_directory)
{
  if (argv.empty()) {
    return fail(Errc::internal, "run_process: empty argument list");
  }
  // The output goes to an unlinked-on-exit file in the working directory, not a
  // pipe: no reader thread, and a tool that writes megabytes cannot block.
  const auto log_path = working_directory / ".process-output";
  UniqueFd log_fd(::open(log_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!log_fd) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(log_path.string()),
                                          errno_message(errno)));
  }

  SpawnActions actions;
  if (!actions.ok() ||
      posix_spawn_file_actions_addchdir_np(actions.get(), working_directory.c_str()) != 0 ||
      posix_spawn_file_actions_adddup2(actions.get(), log_fd.get(), STDOUT_FILENO) != 0 ||
      posix_spawn_file_actions_adddup2(actions.get(), log_fd.get(), STDERR_FILENO) != 0 ||
      posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0) != 0) {
    return fail(Errc::failed, "posix_spawn_file_actions setup failed");
  }

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);

  pid_t pid = -1;
  if (int rc = posix_spawnp(&pid, args[0], actions.get(), nullptr, args.data(), environ); rc != 0) {
    return fail(Errc::failed,
                fmt::format("cannot start {}: {}", in_quotes(argv[0]), errno_message(rc)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return fail(Errc::failed, fmt::format("waitpid for {} failed: {}", in_quotes(argv[0]),
                                            errno_message(errno)));
    }
  }

  ProcessResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
                     : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                           : -1;
  auto output = read_file(log_path.string(), std::uint64_t{64} << 20);
  std::error_code ignored;
  std::filesystem::remove(log_path, ignored);
  if (output) {
    result.output = std::move(*output);
  }
  return result;
}

std::string
command_line_text(const std::vector<std::string>& argv)
{
  std::string text;
  for (const auto& a : argv) {
    if (!text.empty()) {
      text += ' ';
    }
    text += a.find_first_of(" \t\"'") == std::string::npos && !a.empty() ? a : in_quotes(a);
  }
  return text;
}

} // namespace prewarm::aot
