// SPDX-License-Identifier: Apache-2.0
// Measured reuse: which files of a set of cache directories were opened, and
// which were written, while an application ran. inotify(7) watches every
// directory of each tree (IN_OPEN / IN_ACCESS for reads; IN_CREATE,
// IN_MOVED_TO, IN_CLOSE_WRITE for writes) and follows directories created
// during the run. The kernel reports opens by any process, so the watcher
// sees what the application and every child it starts did.
//
// Limits, said where they show: a file created in a new directory before its
// watch is added is missed as an event but still found by listing (it is new
// either way); an event queue overflow (IN_Q_OVERFLOW) makes the read set a
// lower bound, reported as `complete == false`.
#pragma once

#include "audit/file_inventory.hpp"
#include "base/error.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace prewarm::audit {

struct KindAccess
{
  FileSet opened;  // relative paths opened for reading or read
  FileSet written; // relative paths created, moved in or written
};

struct AccessRecord
{
  std::map<std::string, KindAccess, std::less<>> kinds;
  bool complete = true; // false: the event queue overflowed, `opened` is a lower bound
};

class AccessWatch
{
public:
  // Watches every directory under each of `dirs` (kind name -> directory;
  // missing directories are skipped) until stop().
  static Result<std::unique_ptr<AccessWatch>> start(const std::map<std::string, std::filesystem::path>& dirs);

  AccessWatch(const AccessWatch&) = delete;
  AccessWatch& operator=(const AccessWatch&) = delete;
  ~AccessWatch();

  // Reads the events still queued, stops, and returns what was seen.
  AccessRecord stop();

  struct State; // implementation (access_watch.cpp)

private:
  explicit AccessWatch(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

} // namespace prewarm::audit
