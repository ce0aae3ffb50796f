// SPDX-License-Identifier: Apache-2.0
#include "layer/layer_log.hpp"

#include "base/files.hpp"
#include "layer/layer_settings.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prewarm::layer {
namespace {

void
write_all(int fd, std::string_view text)
{
  // One write for the whole line: O_APPEND makes it atomic for a regular
  // file; stderr is best effort.
  while (!text.empty()) {
    const auto n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

} // namespace

bool
operator_log_enabled()
{
  static const bool enabled = [] {
    const char* value = std::getenv("PREWARM_LAYER_LOG");
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
  }();
  return enabled;
}

void
operator_line(std::string_view message)
{
  if (operator_log_enabled()) {
    write_all(STDERR_FILENO, fmt::format("prewarm-layer: {}\n", message));
  }
}

void
audit(const AuditEvent& event)
{
  const auto& s = settings();
  if (s.audit_log.empty() && s.mode != LayerMode::audit) {
    return;
  }
  nlohmann::json line = {
    {"event", event.hit ? "hit" : "miss"},
    {"key", event.keys.empty() ? std::string{} : event.keys.front()},
    {"keys", event.keys},
    {"stage", event.stage},
    {"devices", event.devices},
    {"kernels", event.kernels},
    {"build_ms", event.build_ms},
  };
  if (!event.hit) {
    line["reason"] = event.reason;
    if (event.passed_through) {
      line["passed_through"] = true;
    }
  } else if (!event.origin.empty()) {
    line["from"] = event.origin;
  }
  // Invalid UTF-8 in a kernel name must not throw inside the application.
  auto text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (s.audit_log.empty()) {
    write_all(STDERR_FILENO, "prewarm-layer audit: " + text);
    return;
  }
  // O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader
  // inside the application's clBuildProgram, for ever (with none, the open
  // fails with ENXIO; with one, the check below refuses it). O_NOFOLLOW: a
  // link planted at the name does not redirect the application's writes.
  UniqueFd fd(::open(s.audit_log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY, 0644));
  if (!fd) {
    const int error = errno;
    struct stat st{};
    const bool special = ::lstat(s.audit_log.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
    operator_line(special ? fmt::format("the audit log {} is {}, not a regular file: event not written", s.audit_log,
                                        file_type_name(st.st_mode))
                          : fmt::format("cannot open the audit log {}: {}", s.audit_log, errno_message(error)));
    return;
  }
  if (struct stat st{}; ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    operator_line(fmt::format("the audit log {} is {}, not a regular file: event not written", s.audit_log,
                              file_type_name(st.st_mode)));
    return;
  }
  write_all(fd.get(), text);
}

} // namespace prewarm::layer
