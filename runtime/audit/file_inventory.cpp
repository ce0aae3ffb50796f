// SPDX-License-Identifier: Apache-2.0
#include "audit/file_inventory.hpp"

#include "base/digest.hpp"
#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <system_error>

namespace prewarm::audit {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view k_header_v1 = "prewarm-files 1";
constexpr std::string_view k_header_v2 = "prewarm-files 2";
constexpr std::string_view k_header_v3 = "prewarm-files 3";

// Splits the first space-separated field off `rest` into `field`.
bool
take_field(std::string_view& rest, std::string_view& field)
{
  const auto space = rest.find(' ');
  if (space == 0 || space == std::string_view::npos) {
    return false;
  }
  field = rest.substr(0, space);
  rest.remove_prefix(space + 1);
  return true;
}

template <typename T>
std::optional<T>
to_number(std::string_view text)
{
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

bool
is_hex_digest(std::string_view text)
{
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}
} // namespace

Result<FileSet>
list_files(const fs::path& dir)
{
  FileSet files;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) {
    return files;
  }
  const auto walked = for_each_entry(dir, [&](const TreeEntry& entry) -> Result<WalkNext> {
    if (entry.is_regular_file()) {
      files.emplace(entry.relative);
    }
    return WalkNext::descend;
  });
  if (!walked) {
    return fail(Errc::failed, fmt::format("cannot list {}: {}", in_quotes(dir.string()), walked.error().message()));
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
  state.inode = static_cast<std::uint64_t>(st.st_ino);
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

Result<FileState>
snapshot_one(const fs::path& dir, const std::string& relative)
{
  return state_of(dir / relative, std::numeric_limits<std::uint64_t>::max());
}

bool
file_changed(const fs::path& dir, const std::string& relative, const FileState& before, bool settled)
{
  // Reused means the same file: another inode (unlinked and created again)
  // or another mtime (truncated or rewritten in place) is a rebuilt entry,
  // even with the same bytes. A stat per file decides; a state taken at a
  // run's start, where a rewrite may fall in the same mtime tick, also
  // compares the digest it has, and so does an install's state where only
  // the inode differs.
  const auto now = state_of(dir / relative, 0);
  if (!now || now->size != before.size) {
    return true;
  }
  const bool other_inode = before.inode != 0 && now->inode != before.inode;
  // Against an install's state another inode alone is the root copied with
  // its times (cp -a, an image layer, a volume filled from another): a file
  // written after the install has a later mtime, and the install's digest
  // tells a copy from other bytes. A copy through tar may keep whole seconds
  // only (Go's archive/tar, which writes image layers, rounds unless told
  // to write PAX times; GNU tar's default format). A state from a run's start could share the
  // mtime tick of a rewrite: there another inode is a change.
  const bool copied = settled && other_inode && !before.sha256.empty();
  constexpr std::int64_t k_ns_per_second = 1'000'000'000;
  if (now->mtime_ns != before.mtime_ns &&
      !(copied && now->mtime_ns == before.mtime_ns - before.mtime_ns % k_ns_per_second)) {
    return true;
  }
  if (other_inode && !copied) {
    return true;
  }
  if ((settled && !other_inode) || before.sha256.empty()) {
    return false;
  }
  const auto hashed = state_of(dir / relative, std::numeric_limits<std::uint64_t>::max());
  return !hashed || hashed->size != before.size || hashed->sha256 != before.sha256;
}

std::string
serialize(const Inventory& inventory, const InventoryStates* states)
{
  std::string text = fmt::format("{}\n", states != nullptr ? k_header_v3 : k_header_v1);
  static const FileStates no_states;
  for (const auto& [kind, files] : inventory) {
    if (states == nullptr) {
      for (const auto& file : files) {
        text += fmt::format("{} {}\n", kind, file);
      }
      continue;
    }
    const auto kind_states = states->find(kind);
    const auto& of_kind = kind_states == states->end() ? no_states : kind_states->second;
    for (const auto& file : files) {
      const auto it = of_kind.find(file);
      const FileState state = it == of_kind.end() ? FileState{} : it->second;
      text += fmt::format("{} {} {} {} {} {}\n", kind, state.size, state.mtime_ns, state.inode,
                          state.sha256.empty() ? std::string("-") : state.sha256, file);
    }
  }
  return text;
}

Result<Inventory>
parse_inventory(std::string_view text, InventoryStates* states)
{
  Inventory inventory;
  bool with_states = false;
  bool with_inodes = false;
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
      if (line != k_header_v1 && line != k_header_v2 && line != k_header_v3) {
        return fail(Errc::failed, fmt::format("file inventory: expected {}, {} or {}, got {}", in_quotes(k_header_v3),
                                              in_quotes(k_header_v2), in_quotes(k_header_v1), in_quotes(line)));
      }
      with_states = line != k_header_v1;
      with_inodes = line == k_header_v3;
      continue;
    }
    if (with_states) {
      // KIND SIZE MTIME [INODE] SHA256: fields without spaces; PATH the rest.
      auto rest = line;
      std::array<std::string_view, 5> fields{};
      const std::size_t count = with_inodes ? 5 : 4;
      bool ok = true;
      for (std::size_t i = 0; i < count; ++i) {
        ok = ok && take_field(rest, fields[i]);
      }
      const auto digest = fields[count - 1];
      const auto size_value = to_number<std::uint64_t>(fields[1]);
      const auto mtime_value = to_number<std::int64_t>(fields[2]);
      const auto inode_value = with_inodes ? to_number<std::uint64_t>(fields[3]) : std::optional<std::uint64_t>(0);
      if (!ok || rest.empty() || !size_value || !mtime_value || !inode_value ||
          (digest != "-" && !is_hex_digest(digest))) {
        return fail(Errc::failed,
                    fmt::format("file inventory: line {}: expected 'KIND SIZE MTIME {}SHA256 PATH', got {}",
                                line_number, with_inodes ? "INODE " : "", in_quotes(line)));
      }
      FileState state;
      state.size = *size_value;
      state.mtime_ns = *mtime_value;
      state.inode = *inode_value;
      state.sha256 = digest == "-" ? std::string() : std::string(digest);
      const std::string kind(fields[0]);
      inventory[kind].insert(std::string(rest));
      if (states != nullptr) {
        (*states)[kind].insert_or_assign(std::string(rest), std::move(state));
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
