// SPDX-License-Identifier: Apache-2.0
#include "audit/triton_groups.hpp"

#include "base/directory_tree.hpp"
#include "bundle/cache_kind.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace prewarm::audit {

namespace fs = std::filesystem;

namespace {

// A group file names a handful of paths; anything larger is not one.
constexpr std::size_t k_largest_group_file = 1 << 20;
constexpr std::string_view k_group_prefix = "__grp__";
constexpr std::string_view k_group_suffix = ".json";

Result<std::string>
read_beneath(int dirfd, const std::string& name, std::string_view relative)
{
  UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    return fail(tree_io_error("cannot open", relative, errno));
  }
  std::string text;
  std::array<char, 8192> buffer{};
  for (;;) {
    const auto n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail(tree_io_error("cannot read", relative, errno));
    }
    if (n == 0) {
      return text;
    }
    text.append(buffer.data(), static_cast<std::size_t>(n));
    if (text.size() > k_largest_group_file) {
      return fail(Errc::failed, fmt::format("{}: larger than a Triton group file can be", in_quotes(relative)));
    }
  }
}

// Writes `text` to a temporary beside `name` and renames it over `name`.
Status
replace_beneath(int dirfd, const std::string& name, std::string_view relative, std::string_view text, mode_t mode)
{
  const auto temporary = fmt::format(".{}.prewarm-relocate", name);
  (void)::unlinkat(dirfd, temporary.c_str(), 0);
  UniqueFd fd(::openat(dirfd, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777));
  if (!fd) {
    return fail(tree_io_error("cannot create a temporary for", relative, errno));
  }
  for (std::size_t done = 0; done < text.size();) {
    const auto n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const int e = errno;
      (void)::unlinkat(dirfd, temporary.c_str(), 0);
      return fail(tree_io_error("cannot write", relative, e));
    }
    done += static_cast<std::size_t>(n);
  }
  // The umask must not narrow what the slice said.
  (void)::fchmod(fd.get(), mode & 07777);
  fd.reset();
  if (::renameat(dirfd, temporary.c_str(), dirfd, name.c_str()) != 0) {
    const int e = errno;
    (void)::unlinkat(dirfd, temporary.c_str(), 0);
    return fail(tree_io_error("cannot replace", relative, e));
  }
  return {};
}

Status
relocate_dir(int kind_fd, const fs::path& installed_dir, GroupRelocation& result)
{
  return for_each_entry(kind_fd, "", [&](const TreeEntry& entry) -> Result<WalkNext> {
    if (!entry.is_regular_file() || !is_triton_group_file(entry.name)) {
      return WalkNext::descend;
    }
    ++result.groups_seen;
    const int dirfd = entry.parent_fd;
    const std::string name(entry.name);
    const std::string path(entry.relative);
    PW_ASSIGN(const auto text, read_beneath(dirfd, name, path));
    const auto exists = [dirfd](std::string_view leaf) {
      struct stat child{};
      const std::string leaf_name(leaf);
      return ::fstatat(dirfd, leaf_name.c_str(), &child, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(child.st_mode);
    };
    std::uint64_t rewritten = 0;
    const auto json = relocated_group_json(text, installed_dir, parent_of(entry.relative), exists, rewritten);
    if (json.empty()) {
      return WalkNext::descend;
    }
    // The temporary it writes beside the group is not visited: the walk
    // listed this directory before its first visit.
    PW_TRY(replace_beneath(dirfd, name, path, json, entry.stat.st_mode));
    ++result.groups_rewritten;
    result.paths_rewritten += rewritten;
    result.rewritten.push_back(path);
    return WalkNext::descend;
  });
}

} // namespace

bool
is_triton_group_file(std::string_view name)
{
  return name.size() > k_group_prefix.size() + k_group_suffix.size() && name.starts_with(k_group_prefix) &&
         name.ends_with(k_group_suffix);
}

bool
kind_holds_triton_groups(std::string_view kind)
{
  const auto* rules = bundle::find_kind_rules(kind);
  return rules != nullptr && rules->relocates_triton_groups;
}

std::string
relocated_group_json(std::string_view json, const fs::path& installed_dir, std::string_view group_dir_relative,
                     const std::function<bool(std::string_view)>& exists, std::uint64_t& paths_rewritten)
{
  paths_rewritten = 0;
  auto parsed = nlohmann::json::parse(json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return {};
  }
  const auto children = parsed.find("child_paths");
  if (children == parsed.end() || !children->is_object()) {
    return {};
  }
  const auto dir = group_dir_relative.empty() ? installed_dir : installed_dir / fs::path(group_dir_relative);
  for (auto& [child, value] : children->items()) {
    (void)child;
    if (!value.is_string()) {
      continue;
    }
    const fs::path old_path = value.get<std::string>();
    const auto leaf = old_path.filename().string();
    if (!old_path.is_absolute() || leaf.empty() || leaf == "." || leaf == ".." || !exists(leaf)) {
      continue;
    }
    const auto new_path = (dir / leaf).string();
    if (new_path != old_path.string()) {
      value = new_path;
      ++paths_rewritten;
    }
  }
  if (paths_rewritten == 0) {
    return {};
  }
  // Compact, keys sorted; Triton reads it with json.load() like its own.
  return parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
}

Result<GroupRelocation>
relocate_triton_groups(int kind_fd, std::string_view where, const fs::path& installed_dir)
{
  if (!installed_dir.is_absolute()) {
    return fail(Errc::failed, fmt::format("relocating Triton groups to {}: not an absolute path",
                                          in_quotes(installed_dir.string())));
  }
  GroupRelocation result;
  PW_TRY_CTX(fmt::format("relocating Triton groups in {}", in_quotes(where)),
             relocate_dir(kind_fd, installed_dir.lexically_normal(), result));
  return result;
}

Result<GroupRelocation>
relocate_triton_groups(const fs::path& kind_dir, const fs::path& installed_dir)
{
  UniqueFd fd(::open(kind_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    return fail(tree_io_error("cannot open", kind_dir.string(), errno));
  }
  return relocate_triton_groups(fd.get(), kind_dir.string(), installed_dir);
}

} // namespace prewarm::audit
