// SPDX-License-Identifier: Apache-2.0
#include "pull/download_directory.hpp"

#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/log.hpp"
#include "registry/registry_fetch.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prewarm::pull {

namespace {

namespace fs = std::filesystem;

Error
unsafe(std::string_view path, std::string_view why)
{
  return Error(Errc::verify, fmt::format("{}: {} (the installer's directories are never followed through links)",
                                         in_quotes(path), why),
               "E_TARGET_UNSAFE");
}

// A directory of the install root's (ROOT, ROOT/.prewarm): made if missing,
// never followed if a link.
Result<UniqueFd>
open_root_level(int parent_fd, const std::string& name, const std::string& path, mode_t mode)
{
  if (::mkdirat(parent_fd, name.c_str(), mode) != 0 && errno != EEXIST) {
    return fail(tree_io_error("cannot create", path, errno));
  }
  UniqueFd fd(::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return fail(unsafe(path, "a symlink or not a directory"));
    }
    return fail(tree_io_error("cannot open", path, errno));
  }
  return fd;
}

// A directory of the downloads tree: ours, private, or removed and made again.
Result<UniqueFd>
open_private_level(int parent_fd, const std::string& name, const std::string& path)
{
  for (int round = 0; round < 2; ++round) {
    if (::mkdirat(parent_fd, name.c_str(), 0700) != 0 && errno != EEXIST) {
      return fail(tree_io_error("cannot create", path, errno));
    }
    UniqueFd fd(::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st{};
    if (fd && ::fstat(fd.get(), &st) == 0 && st.st_uid == ::geteuid()) {
      if (::fchmod(fd.get(), 0700) != 0) {
        return fail(tree_io_error("cannot chmod", path, errno));
      }
      return fd;
    }
    const auto why = fd ? fmt::format("owned by uid {}", st.st_uid) : errno_message(errno);
    log::warn("{}: not a download directory of this user ({}): removed", path, why);
    fd.reset();
    PW_TRY(registry::remove_leftover(parent_fd, name, parent_of(path)));
  }
  return fail(Errc::failed, fmt::format("{}: replaced again while it was being made", path), "E_DOWNLOAD_DIR");
}

} // namespace

Result<DownloadDirectory>
open_download_directory(const fs::path& downloads, const std::string& hex)
{
  const auto meta = downloads.parent_path();
  const auto root = meta.parent_path();
  std::error_code ec;
  fs::create_directories(root, ec); // as the installer makes ROOT: its parents are the operator's
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot create the cache root {}: {}", in_quotes(root.string()), ec.message()),
                "E_IO");
  }
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root_fd) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return fail(unsafe(root.string(), "a symlink or not a directory"));
    }
    return fail(tree_io_error("cannot open the cache root", root.string(), errno));
  }
  PW_ASSIGN(const auto meta_fd, open_root_level(root_fd.get(), meta.filename().string(), meta.string(), 0755));
  DownloadDirectory out;
  out.name = hex;
  out.path = downloads / hex;
  PW_ASSIGN(out.downloads, open_private_level(meta_fd.get(), downloads.filename().string(), downloads.string()));
  PW_ASSIGN(out.bundle, open_private_level(out.downloads.get(), hex, out.path.string()));
  PW_ASSIGN(out.slices, open_private_level(out.bundle.get(), "slices", (out.path / "slices").string()));
  return out;
}

Status
write_download_file(int dirfd, const std::string& name, std::string_view bytes, std::string_view where)
{
  PW_TRY(registry::remove_leftover(dirfd, name, where));
  const auto path = join_relative(where, name);
  UniqueFd fd(::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) {
    return fail(tree_io_error("cannot create", path, errno));
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      return fail(tree_io_error("cannot write", path, n < 0 ? errno : EIO));
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Status
remove_download_directory(const DownloadDirectory& directory)
{
  return registry::remove_leftover(directory.downloads.get(), directory.name, directory.path.parent_path().string());
}

Status
remove_download_directory(const fs::path& downloads, const std::string& hex)
{
  UniqueFd fd(::open(downloads.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    return errno == ENOENT ? Status{} : fail(tree_io_error("cannot open", downloads.string(), errno));
  }
  return registry::remove_leftover(fd.get(), hex, downloads.string());
}

} // namespace prewarm::pull
