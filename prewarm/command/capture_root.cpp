// SPDX-License-Identifier: Apache-2.0
#include "command/capture_root.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <vector>

namespace prewarm::command {

namespace fs = std::filesystem;

Status
check_capture_root(const fs::path& path, std::string_view what)
{
  if (!path.is_absolute()) {
    return fail(Errc::usage,
                fmt::format("{} {}: not an absolute path (give the root that prewarm-runtime install --root will use)",
                            what, in_quotes(path.string())),
                "E_USAGE");
  }
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (!fs::exists(status)) {
    return {};
  }
  if (!fs::is_directory(status)) {
    return fail(Errc::usage,
                fmt::format("{} {}: exists and is not a directory (it must be absent or an empty directory; "
                            "prewarm never deletes what is there)",
                            what, in_quotes(path.string())),
                "E_USAGE");
  }
  fs::directory_iterator it(path, ec);
  if (ec) {
    return fail(Errc::usage, fmt::format("{} {}: cannot read it: {}", what, in_quotes(path.string()), ec.message()),
                "E_USAGE");
  }
  if (it != fs::directory_iterator()) {
    return fail(Errc::usage,
                fmt::format("{} {}: not empty (it holds {}); it must be absent or an empty directory, and prewarm "
                            "never deletes what is there (empty it yourself, or choose another path)",
                            what, in_quotes(path.string()), in_quotes(it->path().filename().string())),
                "E_USAGE");
  }
  return {};
}

Result<CaptureRootClaim>
CaptureRootClaim::claim(const fs::path& path_in)
{
  const auto path = path_in.lexically_normal();
  PW_TRY(check_capture_root(path, "capture root"));
  // The outermost missing ancestor: what the claim gives back on the way out.
  fs::path created_top;
  std::error_code ec;
  for (auto p = path; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    if (fs::exists(fs::symlink_status(p, ec))) {
      break;
    }
    created_top = p;
  }
  fs::create_directories(path, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("capture root {}: cannot create it: {}", in_quotes(path.string()),
                                          ec.message()));
  }
  UniqueFd lock(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!lock) {
    return fail(Errc::failed,
                fmt::format("capture root {}: cannot open it: {}", in_quotes(path.string()), errno_message(errno)));
  }
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    return fail(Errc::failed,
                error == EWOULDBLOCK
                  ? fmt::format("capture root {}: another prewarm build is capturing there (it holds the lock); "
                                "give each concurrent build its own --capture-root",
                                in_quotes(path.string()))
                  : fmt::format("capture root {}: cannot lock it: {}", in_quotes(path.string()), errno_message(error)),
                "E_CAPTURE_ROOT_BUSY");
  }
  // Both builds may have found PATH empty before either locked it: what
  // counts is what is there now that this one holds it.
  PW_TRY(check_capture_root(path, "capture root"));
  return CaptureRootClaim(path, created_top, std::move(lock));
}

CaptureRootClaim::CaptureRootClaim(CaptureRootClaim&& other) noexcept
  : m_path(std::move(other.m_path)), m_created_top(std::move(other.m_created_top)), m_lock(std::move(other.m_lock))
{
  other.m_path.clear();
  other.m_created_top.clear();
}

CaptureRootClaim::~CaptureRootClaim()
{
  if (m_path.empty()) {
    return;
  }
  if (!m_created_top.empty()) {
    (void)remove_tree(m_created_top);
  } else {
    (void)empty_again();
  }
}

Status
CaptureRootClaim::empty_again() const
{
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(m_path, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) {
    return fail(Errc::failed, fmt::format("capture root {}: cannot read it: {}", in_quotes(m_path.string()),
                                          ec.message()));
  }
  for (const auto& entry : entries) {
    PW_TRY(remove_tree(entry));
  }
  return {};
}

Status
move_tree(const fs::path& from, const fs::path& to)
{
  if (std::rename(from.c_str(), to.c_str()) == 0) {
    return {};
  }
  if (errno != EXDEV) {
    return fail(Errc::failed, fmt::format("cannot move {} to {}: {}", in_quotes(from.string()), in_quotes(to.string()),
                                          errno_message(errno)));
  }
  std::error_code ec;
  // A cache's own links stay links (a slice carries them as they are).
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot copy {} to {}: {}", in_quotes(from.string()), in_quotes(to.string()),
                                          ec.message()));
  }
  return remove_tree(from);
}

} // namespace prewarm::command
