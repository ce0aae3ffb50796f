// SPDX-License-Identifier: Apache-2.0
#include "jobs/staged_kind.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/entry_path.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <system_error>

namespace prewarm::jobs {

namespace fs = std::filesystem;

namespace {

// One component as the bundle manifest grammar allows it: 1..255 bytes of
// printable UTF-8 (bundle/bundle_manifest.hpp, COMPONENT).
bool
is_canonical_component(std::string_view name)
{
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." && is_printable_utf8(name);
}

// Why the link at `relative` (holding `target`) under `root` cannot ship, or
// "" when a slice carries it: the manifest's TARGET rule
// (bundle::resolve_link_target), judged on a stand-in tree, and a regular
// file at the end (never a directory, another link or nothing).
std::string
link_refusal(const fs::path& root, const std::string& relative, const std::string& target)
{
  constexpr std::string_view k_tree = "custom/tree/";
  auto resolved = bundle::resolve_link_target(std::string(k_tree) + relative, target);
  if (!resolved) {
    const auto& why = resolved.error().message();
    return why.substr(why.rfind(": ") + 2);
  }
  const auto inside = resolved->substr(k_tree.size());
  struct stat st{};
  if (::lstat((root / inside).c_str(), &st) != 0) {
    return fmt::format("leads to nothing ({} does not exist in the cache)", in_quotes(inside));
  }
  if (!S_ISREG(st.st_mode)) {
    return fmt::format("leads to {}, which is {} (a slice carries links to files of the same cache only)",
                       in_quotes(inside), S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "another link" : "not a regular file");
  }
  return {};
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
  std::error_code ec;
  std::vector<fs::path> doomed;
  std::vector<fs::path> non_regular;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(root.string()), ec.message()));
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(root.string()), ec.message()));
    }
    const auto name = it->path().filename().string();
    const auto status = it->symlink_status(ec);
    const auto relative = it->path().lexically_relative(root).string();
    if (is_bookkeeping != nullptr && is_bookkeeping(name)) {
      doomed.push_back(it->path());
      if (fs::is_directory(status)) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!is_canonical_component(name)) {
      result.refusals.push_back(fmt::format(
        "{}: {} has a name that is not 1..255 bytes of printable UTF-8 (the bundle manifest's path grammar: "
        "spaces, parentheses and any printable character are carried; control characters and invalid "
        "UTF-8 are not)",
        label, in_quotes(relative)));
      continue;
    }
    if (fs::is_symlink(status)) {
      const auto target = fs::read_symlink(it->path(), ec);
      const auto why = ec ? fmt::format("cannot be read: {}", ec.message())
                          : link_refusal(root, it->path().lexically_relative(root).generic_string(), target.string());
      ec.clear();
      if (!why.empty()) {
        result.refusals.push_back(fmt::format("{}: {} is a symbolic link to {} that no slice can carry: {}", label,
                                              in_quotes(relative), in_quotes(target.string()), why));
      }
      continue; // shipped as a link entry
    }
    if (!fs::is_regular_file(status) && !fs::is_directory(status)) {
      non_regular.push_back(it->path());
      continue;
    }
  }
  for (const auto& path : doomed) {
    PW_TRY(remove_tree(path));
    ++result.bookkeeping_removed;
  }
  for (const auto& path : non_regular) {
    result.refusals.push_back(fmt::format("{}: {} is a socket, fifo or device (a slice carries files, "
                                          "directories and links inside the cache only)",
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
