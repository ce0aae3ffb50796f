// SPDX-License-Identifier: Apache-2.0
#include "install/recorded_environment.hpp"

#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "install/install_layout.hpp"
#include "install/install_records.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prewarm::install {

namespace fs = std::filesystem;

std::optional<RecordedEnvironment>
recorded_environment(const fs::path& root_in, VersionHold hold, ExportedPaths paths)
{
  std::error_code ec;
  const auto root = fs::absolute(root_in, ec).lexically_normal();
  if (struct stat st{}; ec || ::lstat((meta_dir(root) / k_committing_file).c_str(), &st) == 0) {
    return std::nullopt; // an interrupted install: the full computation says so
  }
  auto opened = open_installed_version(root, hold);
  if (!opened || !*opened || (*opened)->legacy()) {
    return std::nullopt;
  }
  InstalledVersion& version = **opened;
  const auto record = read_start_record(version.dir);
  if (!record || !*record) {
    return std::nullopt;
  }
  const StartRecord& start = **record;
  if (!start.environment_recorded || start.runtime != start_record_runtime() || start.manifest_sha256 != version.marker.manifest_sha256 ||
      start.root != root.string()) {
    return std::nullopt;
  }
  const StartPaths& chosen = paths == ExportedPaths::version ? start.version_paths : start.root_paths;
  // usable_cache()'s in-place rule (user_access.hpp), one directory per kind.
  for (const auto& dir : chosen.directories) {
    const auto fd = open_directory_beneath(version.dir_fd.get(), dir.relative);
    const int access = R_OK | X_OK | (dir.written ? W_OK : 0);
    if (!fd || ::faccessat(fd->get(), ".", access, AT_EACCESS) != 0) {
      return std::nullopt;
    }
  }
  RecordedEnvironment out;
  out.settings = chosen.settings;
  out.warnings = chosen.warnings;
  if (hold == VersionHold::shared) {
    out.held.push_back(std::move(version.dir_fd));
  }
  return out;
}

std::string
shell_export_line(std::string_view name, std::string_view value)
{
  std::string out = "export ";
  out.append(name);
  out += '=';
  out += shell_single_quoted(value);
  out += '\n';
  return out;
}

} // namespace prewarm::install
