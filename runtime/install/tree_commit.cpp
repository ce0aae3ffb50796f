// SPDX-License-Identifier: Apache-2.0
#include "install/tree_commit.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/directory_tree.hpp"
#include "base/log.hpp"
#include "bundle/cache_kind.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <stdio.h> // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace prewarm::install {

namespace {

std::pair<std::string, std::string>
split_parent(std::string_view relative)
{
  const auto slash = relative.rfind('/');
  if (slash == std::string_view::npos) {
    return {"", std::string(relative)};
  }
  return {std::string(relative.substr(0, slash)), std::string(relative.substr(slash + 1))};
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
    return fail(tree_io_error("cannot stat", where, errno));
  }
  if (::fstatat(dir_b, name_b.c_str(), &b, AT_SYMLINK_NOFOLLOW) != 0) {
    return fail(tree_io_error("cannot stat", where, errno));
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
      return fail(tree_io_error("cannot open", where, errno));
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
    const auto path = join_relative(relative, name);
    struct stat src{};
    if (::fstatat(src_fd, name.c_str(), &src, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(tree_io_error("cannot stat staged", path, errno));
    }
    struct stat dst{};
    bool dst_exists = false;
    if (dst_fd >= 0) {
      if (::fstatat(dst_fd, name.c_str(), &dst, AT_SYMLINK_NOFOLLOW) == 0) {
        dst_exists = true;
      } else if (errno != ENOENT) {
        return fail(tree_io_error("cannot stat live", path, errno));
      }
    }
    if (S_ISDIR(src.st_mode)) {
      UniqueFd child(::openat(src_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) {
        return fail(tree_io_error("cannot open staged", path, errno));
      }
      UniqueFd live_child;
      if (!dst_exists) {
        plan.new_directories.push_back(path);
      } else if (S_ISDIR(dst.st_mode)) {
        live_child.reset(::openat(dst_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!live_child) {
          return fail(tree_io_error("cannot open live", path, errno));
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
    return fail(tree_io_error("cannot stat live", top, errno));
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
      return fail(tree_io_error("cannot create", dir, errno));
    }
    journal.record(CommitJournal::StepType::created_directory, dir);
  }
  for (const auto& file : plan.new_files) {
    const auto [parent, name] = split_parent(file);
    PW_ASSIGN(UniqueFd from, open_directory_beneath(staging_fd, parent));
    PW_ASSIGN(UniqueFd to, open_directory_beneath(root_fd, parent));
    if (const int e = move_no_replace(from.get(), name.c_str(), to.get(), name.c_str()); e != 0) {
      if (e != EEXIST) {
        return fail(tree_io_error("cannot move into place", file, e));
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
      note(tree_io_error("cannot undo the commit of", it->path, errno));
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
      return fail(tree_io_error("cannot stat live", name, errno));
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
      return fail(tree_io_error("cannot move into place", name, e));
    }
    // Appeared since the stat (the application created it): exchange below.
    if (::fstatat(root_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(tree_io_error("cannot stat live", name, errno));
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
  return fail(tree_io_error("cannot exchange", name, e));
}

bool
kind_hygiene_removes_files(std::string_view kind)
{
  const auto* rules = bundle::find_kind_rules(kind);
  return rules != nullptr && rules->install_bookkeeping != nullptr;
}

Status
apply_kind_hygiene(int staging_fd, std::string_view kind)
{
  if (!kind_hygiene_removes_files(kind)) {
    return {};
  }
  const auto is_bookkeeping = bundle::find_kind_rules(kind)->install_bookkeeping;
  PW_ASSIGN(UniqueFd top, open_directory_beneath(staging_fd, kind));
  return walk_files(top.get(), std::string(kind), [is_bookkeeping](int dirfd, const std::string& name, const struct stat&) -> Status {
    if (is_bookkeeping(name)) {
      if (::unlinkat(dirfd, name.c_str(), 0) != 0) {
        return fail(tree_io_error("cannot remove", name, errno));
      }
    }
    return {};
  });
}

} // namespace prewarm::install
