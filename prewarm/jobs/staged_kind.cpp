// SPDX-License-Identifier: Apache-2.0
#include "jobs/staged_kind.hpp"

#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/custom_cache.hpp"
#include "bundle/entry_path.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

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
  const auto stand_in = std::string(k_tree) + relative;
  auto resolved = bundle::resolve_link_target(stand_in, target);
  if (!resolved) {
    // The rule alone: the message names the stand-in path first.
    const auto& why = resolved.error().message();
    const auto named = fmt::format("link {} -> {}: ", in_quotes(stand_in), in_quotes(target));
    return why.starts_with(named) ? why.substr(named.size()) : why;
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

// The tree as messages name it: "pocl", "custom cache clfft".
std::string
tree_label(std::string_view tree)
{
  const auto prefix = std::string(bundle::k_custom_kind) + "/";
  return tree.starts_with(prefix) ? fmt::format("custom cache {}", tree.substr(prefix.size())) : std::string(tree);
}

} // namespace

Result<CleanResult>
clean_staged_tree(std::string_view tree, const fs::path& root, bool (*is_bookkeeping)(std::string_view name))
{
  const auto label = tree_label(tree);
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
    if (!is_canonical_component(name)) {
      result.refusals.push_back(fmt::format(
        "{}: {} has a name that is not 1..255 bytes of printable UTF-8 (the bundle manifest's path grammar: "
        "spaces, parentheses and any printable character are carried; control characters and invalid "
        "UTF-8 are not)",
        label, in_quotes(relative)));
      return WalkNext::descend;
    }
    // What the slice writer would refuse after every job ran, told now.
    if (auto limits = bundle::check_entry_path_limits(fmt::format("{}/{}", tree, relative)); !limits) {
      result.refusals.push_back(fmt::format("{}: {} cannot ship: {}", label, in_quotes(relative),
                                            limits.error().message()));
      return WalkNext::skip;
    }
    if (entry.is_symlink()) {
      const auto target = fs::read_symlink(path, ec);
      const auto why = ec ? fmt::format("cannot be read: {}", ec.message())
                          : link_refusal(root, fs::path(relative).generic_string(), target.string());
      if (!why.empty()) {
        result.refusals.push_back(fmt::format("{}: {} is a symbolic link to {} that no slice can carry: {}", label,
                                              in_quotes(relative), in_quotes(target.string()), why));
      }
      return WalkNext::descend; // shipped as a link entry
    }
    if (!entry.is_regular_file() && !entry.is_directory()) {
      non_regular.push_back(path);
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
