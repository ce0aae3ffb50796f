// SPDX-License-Identifier: Apache-2.0
#include "install/user_access.hpp"

#include "base/digest.hpp"
#include "base/directory_tree.hpp"
#include "audit/triton_groups.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/cache_kind.hpp"
#include "install/installed_version.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
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
  PW_TRY(check_private_base(base));
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
  std::uint64_t refused = 0;
  std::string first_refusal;
};

// Copies one listed file from `from_dir_fd`/`name` to `to`, hashing what it
// copies: only the signed bytes arrive. A missing file is no refusal (the
// install's hygiene removes some listed bookkeeping files).
Status
copy_signed_file(int from_dir_fd, const std::string& name, const fs::path& to, const bundle::FileEntry& entry,
                 CopyCounts& counts)
{
  UniqueFd in(::openat(from_dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  const auto refuse = [&](std::string why) -> Status {
    ++counts.refused;
    if (counts.first_refusal.empty()) {
      counts.first_refusal = fmt::format("{}: {}", entry.path, why);
    }
    return {};
  };
  if (!in) {
    return errno == ENOENT ? Status{} : refuse(errno_message(errno));
  }
  struct stat st{};
  if (::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return refuse("not a regular file");
  }
  // The installer rewrote Triton's group files to name the installed
  // directory (audit/triton_groups.hpp), so their bytes are not the signed
  // ones. They are taken as they are and relocated onto the copy, which keeps
  // only paths naming signed files beside them: a changed group file can name
  // nothing the bundle did not sign.
  const bool relocated_group = audit::is_triton_group_file(name) && st.st_size <= (1 << 20);
  if (static_cast<std::uint64_t>(st.st_size) != entry.size && !relocated_group) {
    return refuse(fmt::format("{} bytes, the signed manifest lists {}", st.st_size, entry.size));
  }
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (entry.mode & 0755) | 0600));
  if (!out) {
    return unusable(fmt::format("cannot create {}: {}", in_quotes(to.string()), errno_message(errno)));
  }
  Sha256 digest;
  char buffer[1 << 16];
  for (;;) {
    const auto n = ::read(in.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return unusable(fmt::format("cannot read {}: {}", in_quotes(entry.path), errno_message(errno)));
    }
    if (n == 0) {
      break;
    }
    digest.update(std::string_view(buffer, static_cast<std::size_t>(n)));
    for (ssize_t done = 0; done < n;) {
      const auto w = ::write(out.get(), buffer + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) {
        continue;
      }
      if (w <= 0) {
        return unusable(fmt::format("cannot write {}: {}", in_quotes(to.string()), errno_message(errno)));
      }
      done += w;
    }
  }
  if (digest.finish_hex() != entry.sha256 && !relocated_group) {
    out.reset();
    ::unlink(to.c_str());
    return refuse("its SHA-256 is not the signed one");
  }
  ++counts.files;
  return {};
}

// The signed files, directories and links under `relative`, from the
// installed version into `to`; nothing else the installed tree may hold.
Status
copy_signed_tree(int version_fd, std::string_view relative, const SignedFileList& list, const fs::path& to,
                 CopyCounts& counts)
{
  const std::string prefix = std::string(relative) + "/";
  const auto make_dirs = [&](std::string_view sub) -> Status {
    std::error_code ec;
    fs::create_directories(to / std::string(sub), ec);
    if (ec) {
      return unusable(fmt::format("cannot create {}: {}", in_quotes((to / std::string(sub)).string()), ec.message()));
    }
    return {};
  };
  PW_TRY(make_dirs(""));
  for (const auto& dir : list.directories) {
    if (dir.starts_with(prefix)) {
      PW_TRY(make_dirs(std::string_view(dir).substr(prefix.size())));
    }
  }
  for (const auto& [path, entry] : list.files) {
    if (!path.starts_with(prefix)) {
      continue;
    }
    const std::string_view sub = std::string_view(path).substr(prefix.size());
    PW_TRY(make_dirs(parent_of(sub)));
    auto parent = open_directory_beneath(version_fd, parent_of(path));
    if (!parent) {
      continue; // not there (or not a directory): nothing to copy from
    }
    PW_TRY(copy_signed_file(parent->get(), std::string(leaf_of(path)), to / std::string(sub), entry, counts));
  }
  for (const auto& link : list.links) {
    if (!link.path.starts_with(prefix)) {
      continue;
    }
    // The signed target (validate() checked it leads to a signed file of the
    // same cache), not whatever the installed link holds now.
    const auto at = to / link.path.substr(prefix.size());
    PW_TRY(make_dirs(parent_of(std::string_view(link.path).substr(prefix.size()))));
    if (::symlink(link.target.c_str(), at.c_str()) != 0 && errno != EEXIST) {
      return unusable(fmt::format("cannot create the link {}: {}", in_quotes(at.string()), errno_message(errno)));
    }
  }
  return {};
}

// Copies for other versions that no running application holds.
void
remove_other_copies(const fs::path& user_dir, std::string_view keep)
{
  remove_gone_leftovers(user_dir);
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(user_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  for (const auto& name : names) {
    if (name != keep && !name.starts_with('.')) {
      (void)remove_unless_held(user_dir, name);
    }
  }
}

// USER_DIR/<version>, created if needed and held (shared flock) so that no
// other start of this user removes it while the application runs.
Result<UniqueFd>
held_copy_directory(const fs::path& user_dir, const std::string& version)
{
  UniqueFd user_fd(::open(user_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!user_fd) {
    return unusable(fmt::format("cannot open {}: {}", in_quotes(user_dir.string()), errno_message(errno)));
  }
  for (int attempt = 0;; ++attempt) {
    if (::mkdirat(user_fd.get(), version.c_str(), 0700) != 0 && errno != EEXIST) {
      return unusable(fmt::format("cannot create {}: {}", in_quotes((user_dir / version).string()),
                                  errno_message(errno)));
    }
    auto held = open_held_directory(user_fd.get(), version, "private copy");
    if (held || attempt >= 8) {
      return held;
    }
  }
}

Result<UsableCache>
private_copy(const InstalledCaches& installed, int version_fd, std::string_view relative,
             const UserAccessOptions& options)
{
  PW_ASSIGN(const auto user_dir, user_directory(private_base(options)));
  PW_ASSIGN(auto hold, held_copy_directory(user_dir, installed.version));
  const fs::path target = user_dir / installed.version / std::string(relative);
  UsableCache usable{target, CacheUse::private_copy, false, 0, 0, 0, std::move(hold), {}};
  // Copies of other versions go as soon as no application holds them (a
  // listing and a non-blocking lock attempt each: cheap at every start).
  remove_other_copies(user_dir, installed.version);
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(target, ec))) {
    return usable;
  }
  if (!installed.signed_files) {
    return unusable("the signed file list of the installed slices is not known: no private copy");
  }
  auto listed = installed.signed_files();
  if (!listed || *listed == nullptr) {
    return unusable(fmt::format("no private copy without the signed file list{}",
                                listed ? "" : ": " + listed.error().message()));
  }
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return unusable(fmt::format("cannot create {}: {}", in_quotes(target.parent_path().string()), ec.message()));
  }
  const auto started = std::chrono::steady_clock::now();
  const fs::path partial = fs::path(target.string() + fmt::format(".tmp.{}", ::getpid()));
  (void)remove_tree(partial);
  CopyCounts counts;
  if (auto copied = copy_signed_tree(version_fd, relative, **listed, partial, counts); !copied) {
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
  usable.files_refused = counts.refused;
  usable.copy_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (counts.refused > 0) {
    usable.refusal = counts.first_refusal;
  }
  return usable;
}

} // namespace

bool
kind_is_written(std::string_view kind)
{
  // The layer's store is only read at run time: the layer serves it.
  const auto* rules = bundle::find_kind_rules(kind);
  return rules == nullptr || !rules->served_by_opencl_layer;
}

Status
check_private_base(const fs::path& base)
{
  char resolved[PATH_MAX];
  if (::realpath(base.c_str(), resolved) == nullptr) {
    return unusable(fmt::format("the private copy base {} cannot be resolved: {}", in_quotes(base.string()),
                                errno_message(errno)));
  }
  const uid_t uid = ::geteuid();
  fs::path walked = "/";
  const fs::path real(resolved);
  auto it = real.begin();
  for (;;) {
    struct stat st{};
    if (::lstat(walked.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return unusable(fmt::format("the private copy base {}: {} is not a directory", in_quotes(base.string()),
                                  in_quotes(walked.string())));
    }
    if (st.st_uid != 0 && st.st_uid != uid) {
      return unusable(fmt::format("the private copy base {} is refused: {} belongs to uid {}, neither root nor uid "
                                  "{} (set TMPDIR to a directory of this user or root's)",
                                  in_quotes(base.string()), in_quotes(walked.string()), st.st_uid, uid));
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
      return unusable(fmt::format("the private copy base {} is refused: {} is writable by others and not sticky "
                                  "(mode {:o}): another user could swap a private copy there (chmod +t it, or set "
                                  "TMPDIR to a private directory)",
                                  in_quotes(base.string()), in_quotes(walked.string()), st.st_mode & 07777));
    }
    ++it;
    while (it != real.end() && (it->empty() || *it == "/")) {
      ++it;
    }
    if (it == real.end()) {
      return {};
    }
    walked /= *it;
  }
}

Result<UsableCache>
usable_cache(const InstalledCaches& installed, std::string_view relative, const UserAccessOptions& options)
{
  const fs::path path = installed.dir / std::string(relative);
  UniqueFd version_fd(::open(installed.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!version_fd) {
    return unusable(fmt::format("cannot open {} as uid {}: {}", in_quotes(installed.dir.string()), ::geteuid(),
                                errno_message(errno)));
  }
  auto dir_fd = open_directory_beneath(version_fd.get(), relative);
  if (!dir_fd) {
    return unusable(fmt::format("{} is not a directory inside the root, or is not readable by uid {}: {}",
                                in_quotes(path.string()), ::geteuid(), dir_fd.error().message()));
  }
  if (::faccessat(dir_fd->get(), ".", R_OK | X_OK, AT_EACCESS) != 0) {
    return unusable(fmt::format("{} is not readable by uid {} (install with --owner {}:{}, or as this user)",
                                in_quotes(path.string()), ::geteuid(), ::geteuid(), ::getegid()));
  }
  if (!kind_is_written(relative.substr(0, relative.find('/'))) || ::faccessat(dir_fd->get(), ".", W_OK, AT_EACCESS) == 0) {
    return UsableCache{path, CacheUse::in_place, false, 0, 0, 0, UniqueFd{}, {}};
  }
  return private_copy(installed, version_fd.get(), relative, options);
}

} // namespace prewarm::install
