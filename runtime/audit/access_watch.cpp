// SPDX-License-Identifier: Apache-2.0
#include "audit/access_watch.hpp"

#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>
#include <thread>

namespace prewarm::audit {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t k_file_read_events = IN_OPEN | IN_ACCESS;
constexpr std::uint32_t k_file_write_events = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY;
constexpr std::uint32_t k_watch_mask = k_file_read_events | k_file_write_events | IN_ONLYDIR | IN_EXCL_UNLINK;

struct WatchedDir
{
  std::string kind;
  std::string relative; // "" for the kind's root
};

} // namespace

struct AccessWatch::State
{
  int inotify_fd = -1;
  std::array<int, 2> stop_pipe{-1, -1};
  std::map<int, WatchedDir> watches;
  std::map<std::string, fs::path> roots;
  AccessRecord record;
  std::thread reader;

  ~State()
  {
    for (const int fd : {inotify_fd, stop_pipe[0], stop_pipe[1]}) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
  }

  // Watches `relative` under the kind's root and every directory below it.
  // Files already inside a directory that was just created count as written.
  // Not for_each_entry: the application changes this tree while it is walked,
  // and an entry gone before its lstat is a race to ignore here, an error
  // there; inotify watches by path anyway.
  Status watch_tree(const std::string& kind, const std::string& relative, bool newly_created)
  {
    const auto dir = relative.empty() ? roots.at(kind) : roots.at(kind) / relative;
    const int wd = ::inotify_add_watch(inotify_fd, dir.c_str(), k_watch_mask);
    if (wd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) {
        return {}; // gone again before we got to it
      }
      return fail(Errc::failed,
                  fmt::format("cannot watch {}: {}{}", in_quotes(dir.string()), errno_message(errno),
                              errno == ENOSPC ? " (raise fs.inotify.max_user_watches)" : ""));
    }
    watches[wd] = WatchedDir{kind, relative};
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const auto name = it->path().filename().string();
      const auto status = it->symlink_status(ec);
      if (fs::is_directory(status)) {
        PW_TRY(watch_tree(kind, join_relative(relative, name), newly_created));
      } else if (newly_created && fs::is_regular_file(status)) {
        record.kinds[kind].written.insert(join_relative(relative, name));
      }
    }
    return {};
  }

  void handle(const inotify_event& event)
  {
    if ((event.mask & IN_Q_OVERFLOW) != 0) {
      record.complete = false;
      return;
    }
    const auto it = watches.find(event.wd);
    if (it == watches.end() || event.len == 0) {
      return; // events on the watched directory itself (listing it) say nothing about files
    }
    const auto& [kind, dir] = it->second;
    const auto path = join_relative(dir, event.name);
    if ((event.mask & IN_ISDIR) != 0) {
      if ((event.mask & (IN_CREATE | IN_MOVED_TO)) != 0) {
        // Best effort: a watch that cannot be added loses read events only.
        (void)watch_tree(kind, path, true);
      }
      return;
    }
    auto& access = record.kinds[kind];
    if ((event.mask & k_file_write_events) != 0) {
      access.written.insert(path);
    }
    if ((event.mask & k_file_read_events) != 0) {
      access.opened.insert(path);
    }
  }

  void drain()
  {
    alignas(inotify_event) std::array<char, 64 * 1024> buffer{};
    for (;;) {
      const auto n = ::read(inotify_fd, buffer.data(), buffer.size());
      if (n <= 0) {
        return; // EAGAIN: queue empty
      }
      for (ssize_t offset = 0; offset < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + offset);
        handle(*event);
        offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
  }

  void loop()
  {
    std::array<pollfd, 2> fds{pollfd{inotify_fd, POLLIN, 0}, pollfd{stop_pipe[0], POLLIN, 0}};
    for (;;) {
      if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) {
        record.complete = false;
        return;
      }
      drain();
      if ((fds[1].revents & POLLIN) != 0) {
        drain(); // what the application did just before it ended
        return;
      }
    }
  }
};

AccessWatch::AccessWatch(std::unique_ptr<State> state) : m_state(std::move(state)) {}

AccessWatch::~AccessWatch()
{
  if (m_state && m_state->reader.joinable()) {
    (void)stop();
  }
}

Result<std::unique_ptr<AccessWatch>>
AccessWatch::start(const std::map<std::string, fs::path>& dirs)
{
  auto state = std::make_unique<State>();
  state->inotify_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (state->inotify_fd < 0) {
    return fail(Errc::failed, fmt::format("inotify_init1: {}", errno_message(errno)));
  }
  if (::pipe2(state->stop_pipe.data(), O_CLOEXEC) != 0) {
    return fail(Errc::failed, fmt::format("pipe2: {}", errno_message(errno)));
  }
  for (const auto& [kind, dir] : dirs) {
    std::error_code ec;
    state->record.kinds[kind]; // present even when nothing happens
    if (!fs::is_directory(fs::symlink_status(dir, ec))) {
      continue;
    }
    state->roots[kind] = dir;
    PW_TRY(state->watch_tree(kind, "", false));
  }
  auto* raw = state.get();
  state->reader = std::thread([raw] { raw->loop(); });
  return std::unique_ptr<AccessWatch>(new AccessWatch(std::move(state)));
}

AccessRecord
AccessWatch::stop()
{
  if (m_state->reader.joinable()) {
    const char byte = 1;
    while (::write(m_state->stop_pipe[1], &byte, 1) < 0 && errno == EINTR) {
    }
    m_state->reader.join();
  }
  return m_state->record;
}

} // namespace prewarm::audit
