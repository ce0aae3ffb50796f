// SPDX-License-Identifier: Apache-2.0
#include "base/directory_tree.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace prewarm {

std::string
join_relative(std::string_view parent, std::string_view name)
{
  return parent.empty() ? std::string(name) : fmt::format("{}/{}", parent, name);
}

Error
tree_io_error(std::string_view what, std::string_view path, int error_number)
{
  return Error(Errc::failed, fmt::format("{} {}: {}", what, in_quotes(path), errno_message(error_number)), "E_IO");
}

namespace {

Status
chown_beneath(int dirfd, const std::string& relative, std::uint32_t uid, std::uint32_t gid, std::size_t depth)
{
  if (depth > 64) {
    return fail(Errc::failed, fmt::format("{}: directory tree deeper than 64 levels", in_quotes(relative)), "E_IO");
  }
  PW_ASSIGN(const auto names, list_directory(dirfd, relative));
  for (const auto& name : names) {
    const auto path = join_relative(relative, name);
    if (::fchownat(dirfd, name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(tree_io_error("cannot chown", path, errno));
    }
    struct stat st{};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(tree_io_error("cannot stat", path, errno));
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd child(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) {
        return fail(tree_io_error("cannot open", path, errno));
      }
      PW_TRY(chown_beneath(child.get(), path, uid, gid, depth + 1));
    }
  }
  return {};
}

Status
fsync_tree_at(int dirfd, const std::string& relative, std::size_t depth)
{
  if (depth > 64) {
    return fail(Errc::failed, "fsync_tree: directory tree deeper than 64 levels", "E_IO");
  }
  PW_ASSIGN(const auto names, list_directory(dirfd, relative));
  for (const auto& n : names) {
    struct stat st{};
    if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(tree_io_error("stat", join_relative(relative, n), errno));
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd child(::openat(dirfd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) {
        return fail(tree_io_error("open", join_relative(relative, n), errno));
      }
      PW_TRY(fsync_tree_at(child.get(), join_relative(relative, n), depth + 1));
    } else if (S_ISREG(st.st_mode)) {
      UniqueFd file(::openat(dirfd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
      if (!file || ::fsync(file.get()) != 0) {
        return fail(tree_io_error("fsync", join_relative(relative, n), errno));
      }
    }
  }
  if (::fsync(dirfd) != 0) {
    return fail(tree_io_error("fsync directory", relative.empty() ? "." : relative, errno));
  }
  return {};
}

} // namespace

std::string_view
parent_of(std::string_view relative)
{
  const auto slash = relative.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : relative.substr(0, slash);
}

std::string_view
leaf_of(std::string_view relative)
{
  const auto slash = relative.rfind('/');
  return slash == std::string_view::npos ? relative : relative.substr(slash + 1);
}

Result<UniqueFd>
open_directory_beneath(int base_fd, std::string_view relative)
{
  UniqueFd current(::openat(base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!current) {
    return fail(tree_io_error("cannot open", ".", errno));
  }
  std::size_t start = 0;
  while (start < relative.size()) {
    auto end = relative.find('/', start);
    if (end == std::string_view::npos) {
      end = relative.size();
    }
    const std::string component(relative.substr(start, end - start));
    UniqueFd next(::openat(current.get(), component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      const int e = errno;
      if (e == ELOOP || e == ENOTDIR) {
        return fail(Errc::verify,
                    fmt::format("{} is not a directory (a symlink?)", in_quotes(relative.substr(0, end))),
                    "E_TARGET_UNSAFE");
      }
      return fail(tree_io_error("cannot open", relative.substr(0, end), e));
    }
    current = std::move(next);
    start = end + 1;
  }
  return current;
}

Result<std::vector<std::string>>
list_directory(int dirfd, std::string_view where)
{
  const int copy = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) {
    return fail(tree_io_error("cannot open", where, errno));
  }
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    const int e = errno;
    ::close(copy);
    return fail(tree_io_error("cannot list", where, e));
  }
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name(entry->d_name);
    if (name != "." && name != "..") {
      names.emplace_back(name);
    }
  }
  const int e = errno;
  ::closedir(dir);
  if (e != 0) {
    return fail(tree_io_error("cannot list", where, e));
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// Returns false when the visitor asked to stop. `shown_root` (the root's
// path, or "") prefixes the paths in messages only.
Result<bool>
visit_entries(int dirfd, std::string_view relative, std::string_view shown_root, const EntryVisitor& visit)
{
  const auto shown = [&](std::string_view path) { return join_relative(shown_root, path); };
  PW_ASSIGN(const auto names, list_directory(dirfd, relative.empty() && shown_root.empty() ? "." : shown(relative)));
  for (const auto& name : names) {
    const auto path = join_relative(relative, name);
    struct stat st{};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(tree_io_error("cannot stat", shown(path), errno));
    }
    PW_ASSIGN(const auto next, visit(TreeEntry{dirfd, name, path, st}));
    if (next == WalkNext::stop) {
      return false;
    }
    if (next == WalkNext::skip || !S_ISDIR(st.st_mode)) {
      continue;
    }
    UniqueFd child(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child) {
      const int e = errno;
      if (e == ENOENT) {
        continue; // the visitor removed it
      }
      return fail(tree_io_error("cannot open", shown(path), e));
    }
    PW_ASSIGN(const bool go_on, visit_entries(child.get(), path, shown_root, visit));
    if (!go_on) {
      return false;
    }
  }
  return true;
}

} // namespace

Status
for_each_entry(int dirfd, std::string_view relative, const EntryVisitor& visit)
{
  PW_TRY(visit_entries(dirfd, relative, "", visit));
  return {};
}

Result<UniqueFd>
open_root_directory(const std::filesystem::path& root)
{
  UniqueFd top(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top) {
    const int e = errno;
    if (e == ELOOP || e == ENOTDIR) {
      return fail(Errc::verify, fmt::format("{} is not a directory (a symlink?)", in_quotes(root.string())),
                  "E_TARGET_UNSAFE");
    }
    return fail(tree_io_error("cannot open", root.string(), e));
  }
  return top;
}

Status
for_each_entry(const std::filesystem::path& root, const EntryVisitor& visit)
{
  PW_ASSIGN(const auto top, open_root_directory(root));
  PW_TRY(visit_entries(top.get(), "", root.string(), visit));
  return {};
}

Status
walk_files(int dirfd, const std::string& relative, const FileVisitor& visit)
{
  return for_each_entry(dirfd, relative, [&](const TreeEntry& entry) -> Result<WalkNext> {
    if (!entry.is_directory()) {
      PW_TRY(visit(entry.parent_fd, std::string(entry.name), entry.stat));
    }
    return WalkNext::descend;
  });
}

Result<TreeCounts>
count_tree(int dirfd, std::string_view relative)
{
  TreeCounts counts;
  auto top = open_directory_beneath(dirfd, relative);
  if (!top) {
    return counts;
  }
  PW_TRY(walk_files(top->get(), std::string(relative), [&](int, const std::string&, const struct stat& st) -> Status {
    if (S_ISREG(st.st_mode)) {
      ++counts.files;
      counts.bytes += static_cast<std::uint64_t>(st.st_size);
    }
    return {};
  }));
  return counts;
}

Status
chown_tree(int base_fd, std::string_view relative, std::uint32_t uid, std::uint32_t gid)
{
  PW_ASSIGN(UniqueFd top, open_directory_beneath(base_fd, relative));
  if (::fchown(top.get(), uid, gid) != 0) {
    return fail(tree_io_error("cannot chown", relative, errno));
  }
  return chown_beneath(top.get(), std::string(relative), uid, gid, 0);
}

Status
fsync_tree(int dirfd)
{
  return fsync_tree_at(dirfd, "", 0);
}

} // namespace prewarm
