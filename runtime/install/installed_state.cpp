// SPDX-License-Identifier: Apache-2.0
#include "install/installed_state.hpp"

#include "base/files.hpp"
#include "base/log.hpp"
#include "install/install_layout.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <system_error>

namespace prewarm::install {

namespace fs = std::filesystem;

namespace {

bool
exists_no_follow(const fs::path& path)
{
  struct stat st
  {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Staging directories or temporary files an interrupted install left: the
// locked path removes them (remove_stale_staging), so it must run.
bool
holds_leftovers(const fs::path& root)
{
  std::error_code ec;
  for (fs::directory_iterator it(meta_dir(root), ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.starts_with(k_staging_prefix) || (name.starts_with('.') && name.find(".tmp.") != std::string::npos)) {
      return true;
    }
  }
  return false;
}

} // namespace

std::vector<std::string>
kind_names(const InstalledMarker& marker)
{
  std::vector<std::string> kinds;
  for (const auto& k : marker.kinds) {
    kinds.push_back(k.kind);
  }
  return kinds;
}

bool
installed_already(int root_fd, const fs::path& root, const std::string& manifest_sha256,
                  const std::vector<std::string>& selected_ids, Announce announce)
{
  const bool say = announce == Announce::why_not;
  if (exists_no_follow(meta_dir(root) / k_committing_file)) {
    if (say) {
      log::warn("a previous install under {} was interrupted; installing again", root.string());
    }
    return false;
  }
  auto marker = read_marker(root);
  if (!marker) {
    if (say) {
      log::warn("{}; treating {} as holding nothing and installing again", marker.error().describe(), root.string());
    }
    return false;
  }
  if (!*marker || (*marker)->manifest_sha256 != manifest_sha256 || (*marker)->slice_ids != selected_ids) {
    return false;
  }
  if ((*marker)->version.empty()) {
    if (say) {
      log::info("{} holds this bundle in the layout of an earlier prewarm; installing it as a version", root.string());
    }
    return false;
  }
  const auto version = fmt::format("{}/{}/{}", k_meta_dir, k_versions_dir, (*marker)->version);
  for (const auto& kind : (*marker)->kinds) {
    struct stat st
    {};
    const auto path = fmt::format("{}/{}", version, kind.kind);
    if (::fstatat(root_fd, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
      if (say) {
        log::warn("an installed cache directory under {} is missing; installing again", root.string());
      }
      return false;
    }
  }
  return true;
}

std::optional<InstalledMarker>
unchanged_host_install(const fs::path& root, const std::string& manifest_sha256, const std::string& fingerprint)
{
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fingerprint.empty() || !root_fd || holds_leftovers(root)) {
    return std::nullopt;
  }
  auto marker = read_marker(root);
  if (!marker || !*marker || (*marker)->host_fingerprint != fingerprint ||
      (*marker)->manifest_sha256 != manifest_sha256 ||
      !installed_already(root_fd.get(), root, manifest_sha256, (*marker)->slice_ids, Announce::quiet)) {
    return std::nullopt;
  }
  return **marker;
}

void
report_in_place(const fs::path& root, const InstalledMarker& installed, std::vector<std::string> refused,
                InstallReport& report)
{
  log::info("already installed under {} (host fingerprint unchanged since the install: devices not probed)",
            root.string());
  for (const auto& id : installed.slice_ids) {
    report.selected.push_back({id, "the host it was installed on (unchanged)"});
  }
  report.warnings.insert(report.warnings.end(), refused.begin(), refused.end());
  report.outcome = InstallOutcome::already_installed;
}

} // namespace prewarm::install
