// SPDX-License-Identifier: Apache-2.0
#include "install/tree_commit.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/log.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h> // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

namespace prewarm::install {

namespace {

Error
io_error(std::string_view what, std::string_view path, int error_number)
{
  return Error(Errc::failed, fmt::format("{} {}: {}", what, in_quotes(path), errno_message(error_number)), "E_IO");
}

std::string
join(std::string_view parent, std::string_view name)
{
  return parent.empty() ? std::string(name) : fmt::format("{}/{}", parent, name);
}

std::pair<std::string, std::string>
split_parent(std::string_view relative)
{
  const auto slash = relative.rfind('/');
  if (slash == std::string_view::npos) {
    return {"", std::string(relative)};
  }
  return {std::string(relative.substr(0, slash)), std::string(relative.substr(slash + 1))};
}

// The names in a directory, without "." and "..".
Result<std::vector<std::string>>
list_directory(int dirfd, std::string_view where)
{
  const int copy = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) {
    return fail(io_error("cannot open", where, errno));
  }
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    const int e = errno;
    ::close(copy);
    return fail(io_error("cannot list", where, e));
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
    return fail(io_error("cannot list", where, e));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// renameat2(NOREPLACE), or link + unlink where the filesystem has no
// NOREPLACE (both refuse to replace an existing name: EEXIST).
int
move_no_replace(int from_dir, const char* from, int to_dir, const char* to)
{
  if (::renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) == 0) {
    return 0;
  }
  if (errno != EINVAL && errno != ENOSYS) {
    return errno;
  }
  if (::linkat(from_dir, from, to_dir, to, 0) != 0) {
    return errno;
  }
  ::unlinkat(from_dir, from, 0);
  return 0;
}

Result<bool>
same_content(int dir_a, const std::string& name_a, int dir_b, const std::string& name_b, std::string_view where)
{
  struct stat a{};
  struct stat b{};
  if (::fstatat(dir_a, name_a.c_str(), &a, AT_SYMLINK_NOFOLLOW) != 0) {
    return fail(io_error("cannot stat", where, errno));
  }
  if (::fstatat(dir_b, name_b.c_str(), &b, AT_SYMLINK_NOFOLLOW) != 0) {
    return fail(io_error("cannot stat", where, errno));
  }
  if (!S_ISREG(b.st_mode)) {
    return fail(Errc::verify, fmt::format("the live cache has a non-regular file at {} (a symlink?)", in_quotes(where)),
                "E_TARGET_UNSAFE");
  }
  if (a.st_size != b.st_size) {
    return false;
  }
  const auto digest = [&](int dir, const std::string& name) -> Result<std::string> {
    UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
      return fail(io_error("cannot open", where, errno));
    }
    return sha256_hex_of_fd(fd.get(), static_cast<std::uint64_t>(a.st_size));
  };
  PW_ASSIGN(const auto da, digest(dir_a, name_a));
  PW_ASSIGN(const auto db, digest(dir_b, name_b));
  return da == db;
}

struct MergePlan
{
  std::vector<std::string> new_directories; // parents first
  std::vector<std::string> new_files;
  std::uint64_t kept = 0;
};

// Walks staging `relative` (open as src_fd) against the live tree (dst_fd,
// or -1 when the live directory does not exist).
Status
plan_merge(int src_fd, int dst_fd, const std::string& relative, MergePlan& plan)
{
  PW_ASSIGN(const auto names, list_directory(src_fd, relative));
  for (const auto& name : names) {
    const auto path = join(relative, name);
    struct stat src{};
    if (::fstatat(src_fd, name.c_str(), &src, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(io_error("cannot stat staged", path, errno));
    }
    struct stat dst{};
    bool dst_exists = false;
    if (dst_fd >= 0) {
      if (::fstatat(dst_fd, name.c_str(), &dst, AT_SYMLINK_NOFOLLOW) == 0) {
        dst_exists = true;
      } else if (errno != ENOENT) {
        return fail(io_error("cannot stat live", path, errno));
      }
    }
    if (S_ISDIR(src.st_mode)) {
      UniqueFd child(::openat(src_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) {
        return fail(io_error("cannot open staged", path, errno));
      }
      UniqueFd live_child;
      if (!dst_exists) {
        plan.new_directories.push_back(path);
      } else if (S_ISDIR(dst.st_mode)) {
        live_child.reset(::openat(dst_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!live_child) {
          return fail(io_error("cannot open live", path, errno));
        }
      } else {
        return fail(Errc::verify,
                    fmt::format("the live cache has a {} where the bundle has the directory {}",
                                S_ISLNK(dst.st_mode) ? "symlink" : "file", in_quotes(path)),
                    "E_TARGET_UNSAFE");
      }
      PW_TRY(plan_merge(child.get(), live_child ? live_child.get() : -1, path, plan));
    } else if (S_ISREG(src.st_mode)) {
      if (!dst_exists) {
        plan.new_files.push_back(path);
        continue;
      }
      PW_ASSIGN(const bool same, same_content(src_fd, name, dst_fd, name, path));
      if (!same) {
        return fail(Errc::failed,
                    fmt::format("the live cache already has {} with different content; nothing was moved "
                                "(remove it, or the whole cache directory, to install this bundle)",
                                in_quotes(path)),
                    "E_CONFLICT");
      }
      ++plan.kept;
    } else {
      return fail(Errc::internal, fmt::format("staged {} is neither a file nor a directory", in_quotes(path)));
    }
  }
  return {};
}

Result<KindCommit>
merge_kind(int root_fd, int staging_fd, std::string_view kind, CommitJournal& journal)
{
  const std::string top(kind);
  PW_ASSIGN(UniqueFd src, open_directory_beneath(staging_fd, top));
  UniqueFd live;
  struct stat st{};
  if (::fstatat(root_fd, top.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return fail(Errc::verify, fmt::format("the live cache {} is not a directory (a symlink?)", in_quotes(top)),
                  "E_TARGET_UNSAFE");
    }
    PW_ASSIGN(live, open_directory_beneath(root_fd, top));
  } else if (errno != ENOENT) {
    return fail(io_error("cannot stat live", top, errno));
  }

  MergePlan plan;
  if (!live) {
    plan.new_directories.push_back(top);
  }
  PW_TRY(plan_merge(src.get(), live ? live.get() : -1, top, plan));

  KindCommit result{top, CommitMethod::merged, 0, plan.kept};
  for (const auto& dir : plan.new_directories) {
    const auto [parent, name] = split_parent(dir);
    PW_ASSIGN(UniqueFd parent_fd, open_directory_beneath(root_fd, parent));
    if (::mkdirat(parent_fd.get(), name.c_str(), 0755) != 0) {
      return fail(io_error("cannot create", dir, errno));
    }
    journal.record(CommitJournal::StepType::created_directory, dir);
  }
  for (const auto& file : plan.new_files) {
    const auto [parent, name] = split_parent(file);
    PW_ASSIGN(UniqueFd from, open_directory_beneath(staging_fd, parent));
    PW_ASSIGN(UniqueFd to, open_directory_beneath(root_fd, parent));
    if (const int e = move_no_replace(from.get(), name.c_str(), to.get(), name.c_str()); e != 0) {
      if (e != EEXIST) {
        return fail(io_error("cannot move into place", file, e));
      }
      // Someone (the application itself) wrote this name since the plan.
      PW_ASSIGN(const bool same, same_content(from.get(), name, to.get(), name, file));
      if (!same) {
        return fail(Errc::failed,
                    fmt::format("{} appeared in the live cache with different content during the install", in_quotes(file)),
                    "E_CONFLICT");
      }
      ++result.files_kept;
      continue;
    }
    journal.record(CommitJournal::StepType::moved_file, file);
    ++result.files_moved;
  }
  return result;
}

bool
needs_merge_fallback(int error_number)
{
  // EINVAL/ENOSYS: the filesystem has no RENAME_EXCHANGE/NOREPLACE.
  // EXDEV: overlayfs cannot rename a directory of a lower layer.
  return error_number == EINVAL || error_number == ENOSYS || error_number == EXDEV;
}

Status
walk_files(int dirfd, const std::string& relative, const std::function<Status(int, const std::string&, const struct stat&)>& visit)
{
  PW_ASSIGN(const auto names, list_directory(dirfd, relative));
  for (const auto& name : names) {
    struct stat st{};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(io_error("cannot stat", join(relative, name), errno));
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd child(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) {
        return fail(io_error("cannot open", join(relative, name), errno));
      }
      PW_TRY(walk_files(child.get(), join(relative, name), visit));
    } else {
      PW_TRY(visit(dirfd, name, st));
    }
  }
  return {};
}

} // namespace

std::string_view
to_string(CommitMethod method)
{
  switch (method) {
  case CommitMethod::renamed: return "renamed";
  case CommitMethod::exchanged: return "exchanged";
  case CommitMethod::merged: return "merged";
  }
  return "?";
}

Result<UniqueFd>
open_directory_beneath(int base_fd, std::string_view relative)
{
  UniqueFd current(::openat(base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!current) {
    return fail(io_error("cannot open", ".", errno));
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
      return fail(io_error("cannot open", relative.substr(0, end), e));
    }
    current = std::move(next);
    start = end + 1;
  }
  return current;
}

void
CommitJournal::record(StepType type, std::string relative_path)
{
  m_touched.insert(split_parent(relative_path).first);
  if (type == StepType::created_directory || type == StepType::renamed_directory ||
      type == StepType::exchanged_directory) {
    m_touched.insert(relative_path);
  }
  m_steps.push_back({type, std::move(relative_path)});
}

Status
CommitJournal::undo()
{
  std::optional<Error> first;
  const auto note = [&](Error e) {
    log::warn("undoing the install: {}", e.message());
    if (!first) {
      first = std::move(e);
    }
  };
  for (auto it = m_steps.rbegin(); it != m_steps.rend(); ++it) {
    const auto [parent, name] = split_parent(it->path);
    auto live_parent = open_directory_beneath(m_root_fd, parent);
    auto staged_parent = open_directory_beneath(m_staging_fd, parent);
    if (!live_parent || !staged_parent) {
      note(!live_parent ? live_parent.error() : staged_parent.error());
      continue;
    }
    const int live = live_parent->get();
    const int staged = staged_parent->get();
    int rc = 0;
    switch (it->type) {
    case StepType::exchanged_directory:
      rc = ::renameat2(staged, name.c_str(), live, name.c_str(), RENAME_EXCHANGE);
      break;
    case StepType::renamed_directory:
    case StepType::moved_file:
      rc = ::renameat(live, name.c_str(), staged, name.c_str());
      break;
    case StepType::created_directory:
      rc = ::unlinkat(live, name.c_str(), AT_REMOVEDIR);
      break;
    }
    if (rc != 0) {
      note(io_error("cannot undo the commit of", it->path, errno));
    }
  }
  m_steps.clear();
  if (first) {
    return fail(std::move(*first));
  }
  return {};
}

Result<KindCommit>
commit_kind(int root_fd, int staging_fd, std::string_view kind, CommitStrategy strategy, CommitJournal& journal)
{
  const std::string name(kind);
  if (strategy == CommitStrategy::merge_files) {
    return merge_kind(root_fd, staging_fd, kind, journal);
  }
  struct stat st{};
  if (::fstatat(root_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) {
      return fail(io_error("cannot stat live", name, errno));
    }
    if (::renameat2(staging_fd, name.c_str(), root_fd, name.c_str(), RENAME_NOREPLACE) == 0) {
      journal.record(CommitJournal::StepType::renamed_directory, name);
      return KindCommit{name, CommitMethod::renamed, 0, 0};
    }
    const int e = errno;
    if (needs_merge_fallback(e)) {
      log::verbose("{}: rename not possible here ({}); merging file by file", name, errno_message(e));
      return merge_kind(root_fd, staging_fd, kind, journal);
    }
    if (e != EEXIST) {
      return fail(io_error("cannot move into place", name, e));
    }
    // Appeared since the stat (the application created it): exchange below.
    if (::fstatat(root_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(io_error("cannot stat live", name, errno));
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return fail(Errc::verify,
                fmt::format("the live cache {} is not a directory (a symlink?); not replacing it", in_quotes(name)),
                "E_TARGET_UNSAFE");
  }
  if (::renameat2(staging_fd, name.c_str(), root_fd, name.c_str(), RENAME_EXCHANGE) == 0) {
    journal.record(CommitJournal::StepType::exchanged_directory, name);
    return KindCommit{name, CommitMethod::exchanged, 0, 0};
  }
  const int e = errno;
  if (needs_merge_fallback(e)) {
    log::verbose("{}: exchange not possible here ({}); merging file by file", name, errno_message(e));
    return merge_kind(root_fd, staging_fd, kind, journal);
  }
  return fail(io_error("cannot exchange", name, e));
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
    const auto path = join(relative, name);
    if (::fchownat(dirfd, name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(io_error("cannot chown", path, errno));
    }
    struct stat st{};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(io_error("cannot stat", path, errno));
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd child(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) {
        return fail(io_error("cannot open", path, errno));
      }
      PW_TRY(chown_beneath(child.get(), path, uid, gid, depth + 1));
    }
  }
  return {};
}

} // namespace

Status
chown_tree(int staging_fd, std::string_view kind, std::uint32_t uid, std::uint32_t gid)
{
  PW_ASSIGN(UniqueFd top, open_directory_beneath(staging_fd, kind));
  if (::fchown(top.get(), uid, gid) != 0) {
    return fail(io_error("cannot chown", kind, errno));
  }
  return chown_beneath(top.get(), std::string(kind), uid, gid, 0);
}

bool
kind_hygiene_removes_files(std::string_view kind)
{
  return kind == "sycl";
}

Status
apply_kind_hygiene(int staging_fd, std::string_view kind)
{
  if (!kind_hygiene_removes_files(kind)) {
    return {};
  }
  PW_ASSIGN(UniqueFd top, open_directory_beneath(staging_fd, kind));
  return walk_files(top.get(), std::string(kind), [](int dirfd, const std::string& name, const struct stat&) -> Status {
    if (name == "cache_size.txt" || (name.size() > 5 && name.ends_with(".lock"))) {
      if (::unlinkat(dirfd, name.c_str(), 0) != 0) {
        return fail(io_error("cannot remove", name, errno));
      }
    }
    return {};
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

} // namespace prewarm::install
