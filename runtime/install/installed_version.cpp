// SPDX-License-Identifier: Apache-2.0
#include "install/installed_version.hpp"

#include "base/encoding.hpp"
#include "install/install_layout.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace prewarm::install {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_gone_prefix = ".gone.";

// An install switches and removes the old version within one lock hold; a
// reader that loses this race this many times in a row faces a root being
// replaced continuously, and says so rather than spin.
constexpr int k_resolve_attempts = 16;

std::unexpected<Error>
missing(std::string message)
{
  return fail(Errc::failed, std::move(message), "E_VERSION_MISSING");
}

} // namespace

fs::path
InstalledVersion::manifest_path() const
{
  return legacy() ? meta_dir(root) / k_manifest_copy_file : dir / k_version_manifest_file;
}

fs::path
InstalledVersion::files_path() const
{
  return legacy() ? meta_dir(root) / k_file_inventory_file : dir / k_version_files_file;
}

Result<UniqueFd>
open_held_directory(int parent_fd, const std::string& name, std::string_view what)
{
  UniqueFd fd(::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    return missing(fmt::format("cannot open {} {}: {}", what, in_quotes(name), errno_message(errno)));
  }
  // Blocks only while a remover holds it exclusively, which is for one rename.
  while (::flock(fd.get(), LOCK_SH) != 0) {
    if (errno != EINTR) {
      return fail(Errc::failed, fmt::format("cannot lock {} {}: {}", what, in_quotes(name), errno_message(errno)),
                  "E_IO");
    }
  }
  struct stat held{};
  struct stat named{};
  if (::fstat(fd.get(), &held) != 0 || ::fstatat(parent_fd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 ||
      held.st_dev != named.st_dev || held.st_ino != named.st_ino) {
    return missing(fmt::format("{} {} was removed while it was being opened", what, in_quotes(name)));
  }
  return fd;
}

Result<std::optional<InstalledVersion>>
open_installed_version(const fs::path& root_in, VersionHold hold)
{
  std::error_code ec;
  const fs::path root = fs::absolute(root_in, ec).lexically_normal();
  for (int attempt = 0;; ++attempt) {
    PW_ASSIGN(auto marker, read_marker(root));
    if (!marker) {
      return std::optional<InstalledVersion>{};
    }
    InstalledVersion version;
    version.root = root;
    version.marker = std::move(*marker);
    if (version.legacy()) {
      version.dir = root;
      version.dir_fd.reset(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!version.dir_fd) {
        return fail(Errc::failed, fmt::format("cannot open {}: {}", in_quotes(root.string()), errno_message(errno)),
                    "E_IO");
      }
      return std::optional<InstalledVersion>(std::move(version));
    }
    version.dir = versions_dir(root) / version.marker.version;
    UniqueFd versions_fd(::open(versions_dir(root).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    Result<UniqueFd> opened = missing(fmt::format("cannot open {}: {}", in_quotes(versions_dir(root).string()),
                                                  errno_message(errno)));
    if (versions_fd) {
      if (hold == VersionHold::shared) {
        opened = open_held_directory(versions_fd.get(), version.marker.version, "installed version");
      } else {
        opened = UniqueFd(::openat(versions_fd.get(), version.marker.version.c_str(),
                                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!*opened) {
          opened = missing(fmt::format("cannot open installed version {}: {}", in_quotes(version.dir.string()),
                                       errno_message(errno)));
        }
      }
    }
    if (opened) {
      version.dir_fd = std::move(*opened);
      return std::optional<InstalledVersion>(std::move(version));
    }
    if (attempt + 1 >= k_resolve_attempts) {
      return fail(Error(Errc::failed,
                        fmt::format("{} (the marker under {} names a version that is not there; the next install "
                                    "repairs it)",
                                    opened.error().message(), in_quotes(root.string())),
                        "E_VERSION_MISSING"));
    }
  }
}

Result<Removal>
remove_unless_held(const fs::path& parent, const std::string& name)
{
  const fs::path path = parent / name;
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? Result<Removal>(Removal::absent)
                           : fail(Errc::failed, fmt::format("cannot stat {}: {}", in_quotes(path.string()),
                                                            errno_message(errno)),
                                  "E_IO");
  }
  const fs::path gone = parent / fmt::format("{}{}.{}", k_gone_prefix, name, ::getpid());
  UniqueFd fd;
  if (S_ISDIR(st.st_mode)) {
    fd.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
      return errno == ENOENT ? Result<Removal>(Removal::absent)
                             : fail(Errc::failed, fmt::format("cannot open {}: {}", in_quotes(path.string()),
                                                              errno_message(errno)),
                                    "E_IO");
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      return Removal::held;
    }
    // Renamed while held: a reader that locks it next finds the name gone.
    struct stat locked{};
    if (::fstat(fd.get(), &locked) != 0 || ::lstat(path.c_str(), &st) != 0 || locked.st_ino != st.st_ino ||
        locked.st_dev != st.st_dev) {
      return Removal::absent; // replaced meanwhile: someone else's to judge
    }
  }
  if (::rename(path.c_str(), gone.c_str()) != 0) {
    return errno == ENOENT ? Result<Removal>(Removal::absent)
                           : fail(Errc::failed, fmt::format("cannot rename {}: {}", in_quotes(path.string()),
                                                            errno_message(errno)),
                                  "E_IO");
  }
  fd.reset();
  PW_TRY(remove_tree(gone));
  return Removal::removed;
}

void
remove_gone_leftovers(const fs::path& parent)
{
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().starts_with(k_gone_prefix)) {
      (void)remove_tree(it->path());
    }
  }
}

} // namespace prewarm::install
