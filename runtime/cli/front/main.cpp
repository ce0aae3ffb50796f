// SPDX-License-Identifier: Apache-2.0
// prewarm-runtime: the front of the runtime's command line. What a container
// runs at every start, `prewarm-runtime exec --root DIR -- CMD...`, is
// answered here from the start record the install wrote
// (install/recorded_environment.hpp): the marker, one record, a lock on the
// version, the variables set, then execvp. `env --root DIR` (shell format) is
// answered from the same record: what an entrypoint evals before starting the
// application is as cheap as exec. This program links base and the install
// root's records only, so it maps no archive, registry or TLS library and
// does no work per installed file.
//
// Everything else, and every exec or env this front is not sure about
// (--audit, --format json, an option it does not read, no record, a cache
// directory this user cannot use in place), is handed unchanged to the full
// command line, prewarm-runtime-full (cli/main.cpp), beside this program (a
// build tree, or a directory that holds both) or in ../libexec/prewarm/
// (installed). Its options, messages and exit statuses are the ones users
// see; this front adds none.
#include "base/log.hpp"
#include "install/recorded_environment.hpp"
#include "process/supervise.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace prewarm;

constexpr std::string_view k_full_program = "prewarm-runtime-full";

// `exec` or `env` as this front reads them: --root and --paths (each once, as
// "--opt VALUE" or "--opt=VALUE"); env also --format sh; exec then "--" and
// the command. Anything else is the full command line's to read.
struct FrontRequest
{
  bool exec = false; // else env
  std::string root;
  install::ExportedPaths paths = install::ExportedPaths::version;
  std::vector<std::string> command;
};

std::optional<FrontRequest>
read_request(int argc, char** argv)
{
  if (argc < 2 || (std::string_view(argv[1]) != "exec" && std::string_view(argv[1]) != "env")) {
    return std::nullopt;
  }
  FrontRequest request;
  request.exec = std::string_view(argv[1]) == "exec";
  std::optional<std::string> root;
  std::optional<std::string> paths;
  std::optional<std::string> format;
  int i = 2;
  for (; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    const std::string_view arg = argv[i];
    const auto eq = arg.find('=');
    const auto name = arg.substr(0, eq);
    std::optional<std::string>* slot = name == "--root"                      ? &root
                                       : name == "--paths"                   ? &paths
                                       : name == "--format" && !request.exec ? &format
                                                                             : nullptr;
    if (slot == nullptr || slot->has_value()) {
      return std::nullopt;
    }
    if (eq != std::string_view::npos) {
      *slot = std::string(arg.substr(eq + 1));
    } else if (i + 1 < argc && argv[i + 1][0] != '-') {
      *slot = std::string(argv[++i]);
    } else {
      return std::nullopt;
    }
  }
  const bool command_given = i + 1 < argc;
  if (request.exec != command_given || (!request.exec && i != argc) || !root || root->empty() ||
      (paths && *paths != "version" && *paths != "root") || (format && *format != "sh")) {
    return std::nullopt;
  }
  request.root = *root;
  request.paths = paths == "root" ? install::ExportedPaths::root_links : install::ExportedPaths::version;
  if (request.exec) {
    request.command.assign(argv + i + 1, argv + argc);
  }
  return request;
}

// The full command line's path, or "" when it is not installed.
std::string
full_program()
{
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return {};
  }
  const auto dir = self.parent_path();
  for (const auto& candidate : {dir / k_full_program, dir / ".." / "libexec" / "prewarm" / k_full_program}) {
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return {};
}

[[noreturn]] void
hand_over(int argc, char** argv, const std::optional<FrontRequest>& request)
{
  const auto full = full_program();
  if (!full.empty()) {
    std::vector<char*> args(argv, argv + argc);
    args[0] = const_cast<char*>(full.c_str());
    args.push_back(nullptr);
    ::execv(full.c_str(), args.data());
    log::error("cannot run {}: {}", full, std::strerror(errno));
  } else {
    log::error("{} is not installed beside {} (nor in ../libexec/prewarm/)", k_full_program, argv[0]);
  }
  if (request && request->exec) {
    // The application starts regardless, as the full exec would let it.
    log::warn("starting {} without prewarm caches (it will compile kernels itself)", request->command.front());
    process::replace_process(request->command);
  }
  std::_Exit(1);
}

// exec: set the recorded variables, keep the version held, run the command.
[[noreturn]] void
exec_recorded(const FrontRequest& request, install::RecordedEnvironment& env)
{
  for (const auto& warning : env.warnings) {
    log::warn("{}", warning);
  }
  for (const auto& [name, value] : env.settings) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  // Inherited by the application: the hold lasts as long as it does.
  for (auto& held : env.held) {
    ::fcntl(held.release(), F_SETFD, 0);
  }
  process::replace_process(request.command);
}

// env: the recorded variables as export lines, the full env's output.
int
print_recorded(const install::RecordedEnvironment& env)
{
  for (const auto& warning : env.warnings) {
    log::warn("{}", warning);
  }
  std::string out;
  for (const auto& [name, value] : env.settings) {
    out += install::shell_export_line(name, value);
  }
  return std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0 ? 0 : 1;
}

} // namespace

int
main(int argc, char** argv)
{
  log::set_program_name("prewarm-runtime");
  const auto request = read_request(argc, argv);
  if (request) {
    const auto hold = request->exec ? install::VersionHold::shared : install::VersionHold::none;
    if (auto env = install::recorded_environment(request->root, hold, request->paths)) {
      if (request->exec) {
        exec_recorded(*request, *env);
      }
      return print_recorded(*env);
    }
  }
  hand_over(argc, argv, request);
}
