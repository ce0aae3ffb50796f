// SPDX-License-Identifier: Apache-2.0
#include "jobs/staged_kind.hpp"

#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <system_error>

namespace prewarm::jobs {

namespace fs = std::filesystem;

namespace {

// One component as the bundle manifest grammar allows it: [A-Za-z0-9._+-]{1,255}.
bool
is_canonical_component(std::string_view name)
{
  if (name.empty() || name.size() > 255 || name == "." || name == "..") {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '+' ||
           c == '-';
  });
}

} // namespace

bool
link_stays_inside(const fs::path& root, const fs::path& link, const fs::path& target)
{
  if (target.empty() || target.is_absolute()) {
    return false;
  }
  // Depth below root of the directory holding the link, then walk the target.
  const auto relative_dir = link.parent_path().lexically_relative(root);
  std::ptrdiff_t depth = 0;
  for (const auto& part : relative_dir) {
    if (part == "..") {
      return false;
    }
    if (!part.empty() && part != ".") {
      ++depth;
    }
  }
  for (const auto& part : target) {
    if (part == "..") {
      if (--depth < 0) {
        return false;
      }
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
  }
  return true;
}

Result<CleanResult>
clean_staged_tree(std::string_view label, const fs::path& root, bool (*is_bookkeeping)(std::string_view name))
{
  CleanResult result;
  std::vector<fs::path> doomed;
  std::vector<fs::path> non_regular;
  // A link is seen as a link (lstat), never followed (base/directory_tree.hpp).
  const auto walked = for_each_entry(root, [&](const TreeEntry& entry) -> Result<WalkNext> {
    std::error_code ec;
    const auto path = root / entry.relative;
    const std::string name(entry.name);
    const std::string relative(entry.relative);
    if (is_bookkeeping != nullptr && is_bookkeeping(name)) {
      doomed.push_back(path);
      return WalkNext::skip;
    }
    if (entry.is_symlink()) {
      const auto target = fs::read_symlink(path, ec);
      if (!ec && link_stays_inside(root, path, target)) {
        result.refusals.push_back(fmt::format(
          "{}: {} is a symbolic link to {} inside the cache, which finds its entries through it; a slice "
          "carries regular files and directories only, so the cache would ship without it and never hit",
          label, in_quotes(relative), in_quotes(target.string())));
        return WalkNext::descend;
      }
    }
    if (!entry.is_regular_file() && !entry.is_directory()) {
      non_regular.push_back(path);
      return WalkNext::descend;
    }
    if (!is_canonical_component(name)) {
      result.refusals.push_back(fmt::format(
        "{}: {} has a name outside [A-Za-z0-9._+-] (the bundle manifest's path grammar; spaces, "
        "parentheses and non-ASCII are not carried yet)",
        label, in_quotes(relative)));
    }
    return WalkNext::descend;
  });
  if (!walked) {
    return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(root.string()), walked.error().message()));
  }
  for (const auto& path : doomed) {
    PW_TRY(remove_tree(path));
    ++result.bookkeeping_removed;
  }
  for (const auto& path : non_regular) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return fail(Errc::failed,
                  fmt::format("cannot remove {}: {}", in_quotes(path.string()), errno_message(errno)));
    }
    result.warnings.push_back(fmt::format("{}: removed {} (a link leaving the cache, or not a regular file or "
                                          "directory; a slice holds only files and directories)",
                                          label, in_quotes(path.lexically_relative(root).string())));
  }
  return result;
}

Result<CleanResult>
clean_staged_kind(CacheKind kind, const fs::path& root)
{
  return clean_staged_tree(to_string(kind), root, bundle::rules_of(kind).capture_bookkeeping);
}

} // namespace prewarm::jobs
