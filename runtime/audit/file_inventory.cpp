// SPDX-License-Identifier: Apache-2.0
#include "audit/file_inventory.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <limits>
#include <system_error>

namespace prewarm::audit {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view k_header = "prewarm-files 1";
}

Result<FileSet>
list_files(const fs::path& dir)
{
  FileSet files;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) {
    return files;
  }
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (fs::is_regular_file(it->symlink_status(ec))) {
      files.insert(it->path().lexically_relative(dir).generic_string());
    }
  }
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot list {}: {}", in_quotes(dir.string()), ec.message()));
  }
  return files;
}

namespace {

Result<FileState>
state_of(const fs::path& path, std::uint64_t hash_up_to)
{
  auto fd = open_regular_file(path.string());
  if (!fd) {
    return fail(std::move(fd).error());
  }
  struct stat st{};
  if (::fstat(fd->get(), &st) != 0) {
    return fail(Errc::failed, fmt::format("cannot stat {}: {}", in_quotes(path.string()), errno_message(errno)));
  }
  FileState state;
  state.size = static_cast<std::uint64_t>(st.st_size);
  state.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (state.size <= hash_up_to) {
    PW_ASSIGN(state.sha256, sha256_hex_of_fd(fd->get(), state.size));
  }
  return state;
}

} // namespace

Result<FileStates>
snapshot_files(const fs::path& dir, std::uint64_t hash_up_to)
{
  PW_ASSIGN(const auto files, list_files(dir));
  FileStates states;
  for (const auto& file : files) {
    auto state = state_of(dir / file, hash_up_to);
    if (!state) {
      continue; // gone or unreadable since the listing: no state, so any write to it counts
    }
    states.emplace(file, std::move(*state));
  }
  return states;
}

bool
file_changed(const fs::path& dir, const std::string& relative, const FileState& before)
{
  const auto now = state_of(dir / relative, before.sha256.empty() ? 0 : std::numeric_limits<std::uint64_t>::max());
  if (!now || now->size != before.size) {
    return true;
  }
  if (!before.sha256.empty()) {
    return now->sha256 != before.sha256;
  }
  return now->mtime_ns != before.mtime_ns;
}

std::string
serialize(const Inventory& inventory)
{
  std::string text = fmt::format("{}\n", k_header);
  for (const auto& [kind, files] : inventory) {
    for (const auto& file : files) {
      text += fmt::format("{} {}\n", kind, file);
    }
  }
  return text;
}

Result<Inventory>
parse_inventory(std::string_view text)
{
  Inventory inventory;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    if (end == std::string_view::npos) {
      return fail(Errc::failed, fmt::format("file inventory: line {} has no newline", line_number + 1));
    }
    const auto line = text.substr(0, end);
    text.remove_prefix(end + 1);
    ++line_number;
    if (line_number == 1) {
      if (line != k_header) {
        return fail(Errc::failed, fmt::format("file inventory: expected {}, got {}", in_quotes(k_header),
                                              in_quotes(line)));
      }
      continue;
    }
    const auto space = line.find(' ');
    // KIND holds no space; PATH may (clFFT's "AMD EPYC"), never a newline.
    if (space == 0 || space == std::string_view::npos || space + 1 == line.size()) {
      return fail(Errc::failed,
                  fmt::format("file inventory: line {}: expected 'KIND PATH', got {}", line_number, in_quotes(line)));
    }
    inventory[std::string(line.substr(0, space))].insert(std::string(line.substr(space + 1)));
  }
  if (line_number == 0) {
    return fail(Errc::failed, "file inventory: empty");
  }
  return inventory;
}

} // namespace prewarm::audit
