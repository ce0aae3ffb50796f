// SPDX-License-Identifier: Apache-2.0
#include "install/version_switch.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "install/install_layout.hpp"
#include "install/installed_version.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace prewarm::install {

namespace fs = std::filesystem;

namespace {

int
rename_noreplace(int from_dir, const char* from, int to_dir, const char* to)
{
  return static_cast<int>(::syscall(SYS_renameat2, from_dir, from, to_dir, to, RENAME_NOREPLACE));
}

std::string
link_target(const std::string& id, const std::string& kind)
{
  return fmt::format("{}/{}/{}/{}", k_meta_dir, k_versions_dir, id, kind);
}

} // namespace

std::string
new_version_id(std::string_view manifest_sha256, const fs::path& staging)
{
  auto suffix = staging.filename().string();
  if (suffix.starts_with(k_staging_prefix)) {
    suffix.erase(0, k_staging_prefix.size());
  }
  return fmt::format("{}-{}", manifest_sha256.substr(0, 16), suffix);
}

Status
publish_version(const fs::path& root, const fs::path& staging, int staging_fd, const std::string& id)
{
  if (::fchmod(staging_fd, 0755) != 0) {
    return fail(Errc::failed, fmt::format("cannot chmod {}: {}", in_quotes(staging.string()), errno_message(errno)),
                "E_IO");
  }
  UniqueFd meta_fd(::open(meta_dir(root).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd versions_fd(::open(versions_dir(root).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!meta_fd || !versions_fd) {
    return fail(Errc::verify,
                fmt::format("{} is not a directory (a symlink?)", in_quotes(versions_dir(root).string())),
                "E_TARGET_UNSAFE");
  }
  if (rename_noreplace(meta_fd.get(), staging.filename().c_str(), versions_fd.get(), id.c_str()) != 0) {
    return fail(Errc::failed,
                fmt::format("cannot move {} to {}: {}", in_quotes(staging.string()),
                            in_quotes((versions_dir(root) / id).string()), errno_message(errno)),
                "E_IO");
  }
  if (::fsync(versions_fd.get()) != 0) {
    return fail(Errc::failed, fmt::format("cannot sync {}: {}", in_quotes(versions_dir(root).string()),
                                          errno_message(errno)),
                "E_IO");
  }
  return {};
}

void
point_kind_links(const fs::path& root, const std::string& id, const std::vector<std::string>& kinds,
                 const std::vector<std::string>& previous_kinds)
{
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root_fd) {
    return;
  }
  const std::string versions_prefix = fmt::format("{}/{}/", k_meta_dir, k_versions_dir);
  const auto ours = [&](const std::string& kind) {
    char buffer[4096];
    const auto n = ::readlinkat(root_fd.get(), kind.c_str(), buffer, sizeof buffer);
    return n > 0 && std::string_view(buffer, static_cast<std::size_t>(n)).starts_with(versions_prefix);
  };
  for (const auto& kind : kinds) {
    const auto target = link_target(id, kind);
    char buffer[4096];
    if (const auto n = ::readlinkat(root_fd.get(), kind.c_str(), buffer, sizeof buffer);
        n > 0 && std::string_view(buffer, static_cast<std::size_t>(n)) == target) {
      continue; // right already: nothing written
    }
    struct stat st{};
    const bool present = ::fstatat(root_fd.get(), kind.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (present && S_ISDIR(st.st_mode)) {
      // A kind directory of a legacy install: out of the way, removed with
      // the stale staging by the next install.
      const auto aside = fmt::format("{}/{}legacy-{}-{}", k_meta_dir, k_staging_prefix, kind, ::getpid());
      if (::renameat(root_fd.get(), kind.c_str(), root_fd.get(), aside.c_str()) != 0) {
        log::warn("{} is a directory of an earlier install and cannot be moved ({}); it stays, and is not what "
                  "env/exec export",
                  (root / kind).string(), errno_message(errno));
        continue;
      }
    } else if (present && !S_ISLNK(st.st_mode)) {
      log::warn("{} is {}, not a link this installer made; left as it is", (root / kind).string(),
                file_type_name(st.st_mode));
      continue;
    }
    const auto temporary = fmt::format("{}/.{}.tmp.link{}", k_meta_dir, kind, ::getpid());
    ::unlinkat(root_fd.get(), temporary.c_str(), 0);
    if (::symlinkat(target.c_str(), root_fd.get(), temporary.c_str()) != 0 ||
        ::renameat(root_fd.get(), temporary.c_str(), root_fd.get(), kind.c_str()) != 0) {
      log::warn("cannot point {} at {}: {}", (root / kind).string(), target, errno_message(errno));
      ::unlinkat(root_fd.get(), temporary.c_str(), 0);
    }
  }
  for (const auto& kind : previous_kinds) {
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end() && ours(kind)) {
      ::unlinkat(root_fd.get(), kind.c_str(), 0);
    }
  }
}

bool
kind_links_point_at(const fs::path& root, const std::string& id, const std::vector<std::string>& kinds)
{
  for (const auto& kind : kinds) {
    std::error_code ec;
    if (fs::read_symlink(root / kind, ec) != fs::path(link_target(id, kind)) || ec) {
      return false;
    }
  }
  return true;
}

std::string
environment_record(const std::set<std::string, std::less<>>& allowed)
{
  std::string text;
  for (const auto& name : allowed) {
    text += name + "\n";
  }
  return text;
}

bool
environment_recorded(const fs::path& version_dir, const std::set<std::string, std::less<>>& allowed)
{
  auto text = read_file((version_dir / k_version_environment_file).string(), 1 << 20);
  return text ? *text == environment_record(allowed) : allowed.empty();
}

Status
record_environment(const fs::path& version_dir, const std::set<std::string, std::less<>>& allowed)
{
  // The start record names what the earlier policy exported: gone first, so
  // that exec never reads it beside the new record (the install writes it again).
  if (::unlink((version_dir / k_version_start_file).c_str()) != 0 && errno != ENOENT) {
    return fail(Errc::failed, fmt::format("cannot remove {}: {}", in_quotes((version_dir / k_version_start_file).string()),
                                          errno_message(errno)), "E_IO");
  }
  return write_file_atomic(version_dir / k_version_environment_file, environment_record(allowed));
}

std::size_t
remove_old_versions(const fs::path& root, const std::string& keep)
{
  const auto dir = versions_dir(root);
  remove_gone_leftovers(dir);
  std::size_t held = 0;
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  for (const auto& name : names) {
    if (name == keep || name.starts_with('.')) {
      continue;
    }
    auto removed = remove_unless_held(dir, name);
    if (!removed) {
      log::warn("{} (an earlier version stays)", removed.error().message());
    } else if (*removed == Removal::held) {
      log::verbose("version {} is held by a running application; kept", name);
      ++held;
    }
  }
  return held;
}

} // namespace prewarm::install
