// SPDX-License-Identifier: Apache-2.0
#include "bundle_build/output_preflight.hpp"

#include "base/encoding.hpp"
#include "bundle/bundle_files.hpp"

#include <fmt/format.h>

#include <unistd.h>

namespace prewarm::bundle_build {
namespace {

namespace fs = std::filesystem;

Error
output_error(std::string_view what, const fs::path& path, std::string_view why)
{
  return Error(Errc::usage, fmt::format("{} {}: {}", what, in_quotes(path.string()), why), "E_OUTPUT");
}

} // namespace

Status
check_output_path(const fs::path& path, OutputKind kind, std::string_view what)
{
  if (path.empty() || path.filename().empty() || path.filename() == "." || path.filename() == "..") {
    return fail(output_error(what, path, "must name a file or directory to write (not an existing directory's "
                                         "trailing slash, '.' or '..')"));
  }
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (status.type() != fs::file_type::not_found) {
    const bool is_dir = fs::is_directory(status);
    if (kind == OutputKind::file && is_dir) {
      return fail(output_error(what, path, "is a directory; name a file inside it"));
    }
    if (kind == OutputKind::bundle_directory && (!is_dir || !bundle::is_bundle_directory(path))) {
      return fail(output_error(what, path,
                               "exists and is not a prewarm bundle, so it would not be replaced (remove it, or "
                               "choose another path)"));
    }
    if (kind == OutputKind::directory && !is_dir) {
      return fail(output_error(what, path, "exists and is not a directory (remove it, or choose another path)"));
    }
  }
  // The nearest existing ancestor decides whether the missing part can be made.
  fs::path ancestor = path.has_parent_path() ? path.parent_path() : fs::path(".");
  while (!ancestor.empty() && fs::symlink_status(ancestor, ec).type() == fs::file_type::not_found) {
    ancestor = ancestor.has_parent_path() && ancestor.parent_path() != ancestor ? ancestor.parent_path()
                                                                                 : fs::path(".");
    if (ancestor == ".") {
      break;
    }
  }
  if (!fs::is_directory(ancestor, ec)) {
    return fail(output_error(what, path,
                             fmt::format("{} is not a directory, so nothing can be created below it",
                                         in_quotes(ancestor.string()))));
  }
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0) {
    return fail(output_error(what, path,
                             fmt::format("the directory {} is not writable by this user (uid {}); choose a path "
                                         "you may write, or fix its permissions",
                                         in_quotes(ancestor.string()), ::getuid())));
  }
  return {};
}

} // namespace prewarm::bundle_build
