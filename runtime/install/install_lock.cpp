// SPDX-License-Identifier: Apache-2.0
#include "install/install_lock.hpp"

#include "base/encoding.hpp"
#include "base/log.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <thread>

namespace prewarm::install {

Result<InstallLock>
InstallLock::acquire(const std::filesystem::path& lock_file, std::chrono::milliseconds timeout)
{
  // O_NONBLOCK: a FIFO planted as the lock file must not hold the open.
  UniqueFd fd(::open(lock_file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644));
  if (!fd) {
    return fail(Errc::failed,
                fmt::format("cannot open the lock file {}: {}", in_quotes(lock_file.string()), errno_message(errno)),
                "E_IO");
  }
  if (struct stat st{}; ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(Errc::failed,
                fmt::format("the lock file {} is {}, not a regular file (remove it)", in_quotes(lock_file.string()),
                            file_type_name(st.st_mode)),
                "E_NOT_REGULAR");
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool announced = false;
  for (;;) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
      return InstallLock(std::move(fd));
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return fail(Errc::failed, fmt::format("cannot lock {}: {}", in_quotes(lock_file.string()), errno_message(errno)),
                  "E_IO");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return fail(Errc::failed,
                  fmt::format("another installer holds {} (waited {} ms; is another container installing "
                              "into the same cache root?)",
                              in_quotes(lock_file.string()), timeout.count()),
                  "E_LOCK_TIMEOUT");
    }
    if (!announced) {
      log::info("waiting for another installer to release {}", lock_file.string());
      announced = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace prewarm::install
