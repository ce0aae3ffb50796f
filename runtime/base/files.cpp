// SPDX-License-Identifier: Apache-2.0
#include "base/files.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <vector>

namespace prewarm {

std::string
errno_message(int error_number)
{
  return std::error_code(error_number, std::generic_category()).message();
}

UniqueFd&
UniqueFd::operator=(UniqueFd&& other) noexcept
{
  if (this != &other) {
    reset(other.release());
  }
  return *this;
}

UniqueFd::~UniqueFd()
{
  reset();
}

int
UniqueFd::release()
{
  const int fd = m_fd;
  m_fd = -1;
  return fd;
}

void
UniqueFd::reset(int fd)
{
  if (m_fd >= 0) {
    ::close(m_fd);
  }
  m_fd = fd;
}

std::string_view
file_type_name(unsigned mode)
{
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
  }
}

Result<UniqueFd>
open_regular_file(const std::string& path)
{
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait, without a
  // deadline, for a writer that never comes (the open of a device node may
  // wait too). A regular file ignores the flag; it is cleared below anyway.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    const int e = errno;
    if (e == ELOOP) {
      return fail(Errc::verify, fmt::format("{}: is a symbolic link", in_quotes(path)), "E_NOT_REGULAR");
    }
    if (struct stat st{}; e == ENXIO && ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      // A socket (or a FIFO with O_NONBLOCK on some kernels) cannot be opened.
      return fail(Errc::verify, fmt::format("{}: not a regular file ({})", in_quotes(path), file_type_name(st.st_mode)),
                  "E_NOT_REGULAR");
    }
    return fail(Errc::failed, fmt::format("cannot open {}: {}", in_quotes(path), errno_message(e)));
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) {
    return fail(Errc::failed, fmt::format("cannot stat {}: {}", in_quotes(path), errno_message(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return fail(Errc::verify, fmt::format("{}: not a regular file ({})", in_quotes(path), file_type_name(st.st_mode)),
                "E_NOT_REGULAR");
  }
  if (const int flags = ::fcntl(fd.get(), F_GETFL); flags >= 0) {
    (void)::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  }
  return fd;
}

Result<std::uint64_t>
file_size(int fd)
{
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    return fail(Errc::failed, "fstat: " + errno_message(errno));
  }
  return static_cast<std::uint64_t>(st.st_size);
}

Result<std::string>
read_file(const std::string& path, std::uint64_t max_bytes)
{
  PW_ASSIGN(UniqueFd fd, open_regular_file(path));
  PW_ASSIGN(const std::uint64_t size, file_size(fd.get()));
  const auto too_big = [&](std::uint64_t seen) {
    return fail(Errc::verify,
                fmt::format("{}: {} bytes is over the limit of {}", in_quotes(path), seen, max_bytes),
                "E_LIMIT");
  };
  if (size > max_bytes) {
    return too_big(size);
  }
  // Read to end of file rather than st_size bytes: /proc and sysfs files
  // report size 0 (or a page) whatever they hold. Read straight into the
  // string, sized from st_size plus one byte to see the end: a bundle's
  // manifest (a megabyte at 10,000 files) is read at every container start,
  // and growing a string chunk by chunk copied it many times.
  std::string out;
  out.reserve(static_cast<std::size_t>(size) + 1);
  for (;;) {
    if (out.size() == out.capacity()) {
      out.reserve(out.capacity() + std::max<std::size_t>(out.capacity(), 1u << 16));
    }
    // read() writes into the spare capacity; the string keeps what it wrote
    // and nothing else (no zero-filling of a megabyte first).
    ssize_t got = 0;
    int read_errno = 0;
    const std::size_t had = out.size();
    out.resize_and_overwrite(out.capacity(), [&](char* data, std::size_t room) {
      got = ::read(fd.get(), data + had, room - had);
      read_errno = errno;
      return had + static_cast<std::size_t>(std::max<ssize_t>(got, 0));
    });
    if (got < 0) {
      if (read_errno == EINTR) {
        continue;
      }
      return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(path), errno_message(read_errno)));
    }
    if (got == 0) {
      break;
    }
    if (out.size() > max_bytes) {
      return too_big(out.size());
    }
  }
  return out;
}

Result<std::string>
read_input_file(const std::string& path, std::uint64_t max_bytes)
{
  auto text = read_file(path, max_bytes);
  if (!text && text.error().category() == Errc::verify) {
    return fail(Error(Errc::usage, text.error().message(), text.error().code()));
  }
  return text;
}

namespace {

Status
write_all(int fd, std::string_view bytes)
{
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (put < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail(Errc::failed, errno_message(errno));
    }
    done += static_cast<std::size_t>(put);
  }
  return {};
}

} // namespace

Status
fsync_directory(const std::filesystem::path& dir)
{
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || ::fsync(fd.get()) != 0) {
    return fail(Errc::failed, fmt::format("cannot sync directory {}: {}", in_quotes(dir.string()), errno_message(errno)));
  }
  return {};
}

Status
write_file_atomic(const std::filesystem::path& path,
                  std::string_view bytes,
                  mode_t mode,
                  Durability durability)
{
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  UniqueFd fd(::mkostemp(name.data(), O_CLOEXEC));
  if (!fd) {
    return fail(Errc::failed, fmt::format("cannot create a temporary file in {}: {}", in_quotes(dir.string()), errno_message(errno)));
  }
  const std::string tmp(name.data());
  const auto cleanup_fail = [&](std::string why) {
    ::unlink(tmp.c_str());
    return fail(Errc::failed, fmt::format("cannot write {}: {}", in_quotes(path.string()), why));
  };
  if (::fchmod(fd.get(), mode) != 0) {
    return cleanup_fail(errno_message(errno));
  }
  if (auto s = write_all(fd.get(), bytes); !s) {
    return cleanup_fail(s.error().message());
  }
  if (durability == Durability::fsync && ::fsync(fd.get()) != 0) {
    return cleanup_fail(errno_message(errno));
  }
  fd.reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return cleanup_fail(errno_message(errno));
  }
  if (durability == Durability::fsync) {
    return fsync_directory(dir);
  }
  return {};
}

Result<std::filesystem::path>
make_private_directory(const std::filesystem::path& parent, std::string_view prefix)
{
  std::string tmpl = (parent / (std::string(prefix) + "XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    return fail(Errc::failed, fmt::format("cannot create a directory in {}: {}", in_quotes(parent.string()), errno_message(errno)));
  }
  return std::filesystem::path(name.data());
}

Status
remove_tree(const std::filesystem::path& path)
{
  std::error_code ec;
  std::filesystem::remove_all(path, ec); // does not follow symlinks
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot remove {}: {}", in_quotes(path.string()), ec.message()));
  }
  return {};
}

Result<TempDir>
TempDir::create(std::string_view prefix)
{
  std::error_code ec;
  auto base = std::filesystem::temp_directory_path(ec);
  if (ec) {
    base = "/tmp";
  }
  PW_ASSIGN(auto path, make_private_directory(base, prefix));
  return TempDir(std::move(path));
}

TempDir::TempDir(TempDir&& other) noexcept : m_path(std::move(other.m_path))
{
  other.m_path.clear();
}

TempDir::~TempDir()
{
  if (!m_path.empty()) {
    (void)remove_tree(m_path);
  }
}

} // namespace prewarm
