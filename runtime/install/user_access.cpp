// SPDX-License-Identifier: Apache-2.0
#include "install/user_access.hpp"

#include "audit/triton_groups.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "install/tree_commit.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

namespace prewarm::install {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_unusable = "E_CACHE_UNUSABLE";

std::unexpected<Error>
unusable(std::string message)
{
  return fail(Errc::failed, std::move(message), std::string(k_unusable));
}

fs::path
private_base(const UserAccessOptions& options)
{
  if (!options.private_base.empty()) {
    return options.private_base;
  }
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir != nullptr && tmpdir[0] == '/') {
    return tmpdir;
  }
  return "/tmp";
}

// BASE/prewarm-<uid>: created 0700, and only used when it is a real
// directory of this user that nobody else can enter (a shared /tmp lets
// anyone create the name first).
Result<fs::path>
user_directory(const fs::path& base)
{
  const uid_t uid = ::geteuid();
  const fs::path dir = base / fmt::format("prewarm-{}", uid);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return unusable(fmt::format("cannot create {}: {}", in_quotes(dir.string()), errno_message(errno)));
  }
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) {
    return unusable(fmt::format("cannot stat {}: {}", in_quotes(dir.string()), errno_message(errno)));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0) {
    return unusable(fmt::format("{} is not a private directory of uid {} (a link, another owner, or open to "
                                "others); not using it",
                                in_quotes(dir.string()), uid));
  }
  return dir;
}

struct CopyCounts
{
  std::uint64_t files = 0;
};

// Regular files and directories only: the installed tree holds nothing
// else, and nothing else is copied if something else appeared.
Status
copy_tree(const fs::path& from, const fs::path& to, CopyCounts& counts)
{
  std::error_code ec;
  fs::create_directory(to, ec);
  if (ec) {
    return unusable(fmt::format("cannot create {}: {}", in_quotes(to.string()), ec.message()));
  }
  fs::recursive_directory_iterator it(from, fs::directory_options::none, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    if (ec) {
      break;
    }
    const auto target = to / it->path().lexically_relative(from);
    if (fs::is_directory(status)) {
      fs::create_directory(target, ec);
    } else if (fs::is_regular_file(status)) {
      // A file this user cannot read is not one the installer wrote (those
      // are 0644): PoCL leaves 0600 tempfile_* behind in its cache directory
      // on every run, also the installer's own runs. Skipped, not fatal.
      if (::access(it->path().c_str(), R_OK) != 0) {
        continue;
      }
      fs::copy_file(it->path(), target, ec);
      ++counts.files;
    }
    if (ec) {
      return unusable(fmt::format("cannot copy {} to {}: {}", in_quotes(it->path().string()),
                                  in_quotes(target.string()), ec.message()));
    }
  }
  if (ec) {
    return unusable(fmt::format("cannot read {}: {}", in_quotes(from.string()), ec.message()));
  }
  return {};
}

// Copies for other bundles: the installed bundle changed since they were made.
void
remove_other_layers(const fs::path& user_dir, std::string_view keep)
{
  std::error_code ec;
  for (fs::directory_iterator it(user_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename() != keep) {
      (void)remove_tree(it->path());
    }
  }
}

Result<UsableCache>
private_copy(const fs::path& installed, std::string_view relative, std::string_view manifest_sha256,
             const UserAccessOptions& options)
{
  PW_ASSIGN(const auto user_dir, user_directory(private_base(options)));
  const std::string layer_name(manifest_sha256.substr(0, 16));
  const fs::path target = user_dir / layer_name / std::string(relative);
  UsableCache usable{target, CacheUse::private_copy, false, 0, 0};
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(target, ec))) {
    return usable;
  }
  remove_other_layers(user_dir, layer_name);
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return unusable(fmt::format("cannot create {}: {}", in_quotes(target.parent_path().string()), ec.message()));
  }
  const auto started = std::chrono::steady_clock::now();
  const fs::path partial = fs::path(target.string() + fmt::format(".tmp.{}", ::getpid()));
  (void)remove_tree(partial);
  CopyCounts counts;
  if (auto copied = copy_tree(installed, partial, counts); !copied) {
    (void)remove_tree(partial);
    return fail(std::move(copied).error());
  }
  // The copy's Triton groups name the copy (audit/triton_groups.hpp), so
  // the application reads, and the audit sees, the files it uses.
  if (audit::kind_holds_triton_groups(relative)) {
    if (auto relocated = audit::relocate_triton_groups(partial, target); !relocated) {
      (void)remove_tree(partial);
      return fail(std::move(relocated).error());
    }
  }
  if (::rename(partial.c_str(), target.c_str()) != 0) {
    const int e = errno;
    (void)remove_tree(partial);
    // Another exec of this user finished the same copy first: use theirs.
    if ((e == ENOTEMPTY || e == EEXIST) && fs::is_directory(fs::symlink_status(target, ec))) {
      return usable;
    }
    return unusable(fmt::format("cannot rename {} to {}: {}", in_quotes(partial.string()), in_quotes(target.string()),
                                errno_message(e)));
  }
  usable.copied_now = true;
  usable.files_copied = counts.files;
  usable.copy_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return usable;
}

} // namespace

bool
kind_is_written(std::string_view kind)
{
  return kind != "programs";
}

Result<UsableCache>
usable_cache(const fs::path& root, std::string_view relative, std::string_view manifest_sha256,
             const UserAccessOptions& options)
{
  const fs::path installed = root / std::string(relative);
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) {
    return unusable(fmt::format("cannot open {} as uid {}: {}", in_quotes(root.string()), ::geteuid(),
                                errno_message(errno)));
  }
  auto dir_fd = open_directory_beneath(root_fd.get(), relative);
  if (!dir_fd) {
    return unusable(fmt::format("{} is not a directory inside the root, or is not readable by uid {}: {}",
                                in_quotes(installed.string()), ::geteuid(), dir_fd.error().message()));
  }
  if (::faccessat(dir_fd->get(), ".", R_OK | X_OK, AT_EACCESS) != 0) {
    return unusable(fmt::format("{} is not readable by uid {} (install with --owner {}:{}, or as this user)",
                                in_quotes(installed.string()), ::geteuid(), ::geteuid(), ::getegid()));
  }
  if (!kind_is_written(relative.substr(0, relative.find('/'))) || ::faccessat(dir_fd->get(), ".", W_OK, AT_EACCESS) == 0) {
    return UsableCache{installed, CacheUse::in_place, false, 0, 0};
  }
  return private_copy(installed, relative, manifest_sha256, options);
}

} // namespace prewarm::install
