// SPDX-License-Identifier: Apache-2.0
#include "jobs/staged_kind.hpp"

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

Result<CleanResult>
clean_staged_kind(CacheKind kind, const fs::path& root)
{
  CleanResult result;
  const auto is_bookkeeping = bundle::rules_of(kind).capture_bookkeeping;
  std::error_code ec;
  std::vector<fs::path> doomed;
  std::vector<fs::path> non_regular;
  std::vector<fs::path> bad_names;
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
    if (is_bookkeeping != nullptr && is_bookkeeping(name)) {
      doomed.push_back(it->path());
      if (fs::is_directory(status)) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!fs::is_regular_file(status) && !fs::is_directory(status)) {
      non_regular.push_back(it->path());
      continue;
    }
    if (!is_canonical_component(name)) {
      bad_names.push_back(it->path());
    }
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
    result.warnings.push_back(fmt::format("{}: removed {} (not a regular file or directory; a slice "
                                          "holds only files and directories)",
                                          to_string(kind), in_quotes(path.lexically_relative(root).string())));
  }
  for (const auto& path : bad_names) {
    result.warnings.push_back(fmt::format(
      "{}: {} has a name outside [A-Za-z0-9._+-]; the bundle writer will refuse it", to_string(kind),
      in_quotes(path.lexically_relative(root).string())));
  }
  return result;
}

} // namespace prewarm::jobs
