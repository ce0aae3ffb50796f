// SPDX-License-Identifier: Apache-2.0
// The installer lock: flock(2) on ROOT/.prewarm/lock. Two containers sharing
// a cache volume install one after the other; the second then finds the
// marker and does nothing. flock locks die with the process, so a killed
// installer never leaves the root locked.
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"

#include <chrono>
#include <filesystem>

namespace prewarm::install {

class InstallLock
{
public:
  // Waits up to `timeout` (polling; flock has no timed wait) and fails with
  // Errc::failed E_LOCK_TIMEOUT naming the lock file. The lock file is opened
  // without following a symlink.
  static Result<InstallLock> acquire(const std::filesystem::path& lock_file, std::chrono::milliseconds timeout);

  InstallLock(InstallLock&&) noexcept = default;
  InstallLock& operator=(InstallLock&&) noexcept = default;
  ~InstallLock() = default; // closing the fd releases the lock

private:
  explicit InstallLock(UniqueFd fd) : m_fd(std::move(fd)) {}
  UniqueFd m_fd;
};

} // namespace prewarm::install
