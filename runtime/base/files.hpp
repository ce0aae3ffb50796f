// SPDX-License-Identifier: Apache-2.0
// File-system helpers that report errors as values and never follow a final
// symlink where that would let a planted link redirect a read or write.
#pragma once

#include "base/error.hpp"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace prewarm {

std::string errno_message(int error_number); // "No such file or directory"

// Owns a file descriptor; closes it on destruction.
class UniqueFd
{
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : m_fd(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : m_fd(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return m_fd; }
  explicit operator bool() const { return m_fd >= 0; }
  int release();
  void reset(int fd = -1);

private:
  int m_fd = -1;
};

// "a FIFO", "a directory", ... for an st_mode (messages that name what a
// path turned out to be).
std::string_view file_type_name(unsigned mode);

// Opens `path` read-only without following a final symlink; it must be a
// regular file (E_NOT_REGULAR names what it is). Never blocks: a FIFO or a
// device node is refused, not waited on.
Result<UniqueFd> open_regular_file(const std::string& path);
Result<std::uint64_t> file_size(int fd);

// Reads a whole regular file; more than `max_bytes` is an error (E_LIMIT).
Result<std::string> read_file(const std::string& path,
                              std::uint64_t max_bytes = std::uint64_t{256} << 20);

// read_file() for a file a person named on the command line or in a config
// (the builder's manifest, a signing key): over the limit or not a regular
// file is their mistake, a usage error (exit 2), not a verification failure.
Result<std::string> read_input_file(const std::string& path, std::uint64_t max_bytes);

enum class Durability { none, fsync };

// Writes `bytes` to a temporary file beside `path`, then renames it over
// `path`: readers see the old or the new content, never a mix. With
// Durability::fsync the file and its directory are synced before returning.
Status write_file_atomic(const std::filesystem::path& path,
                         std::string_view bytes,
                         mode_t mode = 0644,
                         Durability durability = Durability::fsync);

Status fsync_directory(const std::filesystem::path& dir);

// Creates a fresh 0700 directory `parent/prefixXXXXXX`.
Result<std::filesystem::path> make_private_directory(const std::filesystem::path& parent,
                                                     std::string_view prefix);

// Removes a tree without following symlinks; a missing tree is fine.
Status remove_tree(const std::filesystem::path& path);

// A private scratch directory removed (with its contents) on destruction.
class TempDir
{
public:
  static Result<TempDir> create(std::string_view prefix = "prewarm-");
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::filesystem::path& path() const { return m_path; }

private:
  explicit TempDir(std::filesystem::path path) : m_path(std::move(path)) {}
  std::filesystem::path m_path;
};

} // namespace prewarm
