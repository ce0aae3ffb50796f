// SPDX-License-Identifier: Apache-2.0
#include "audit/file_inventory.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

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
    if (space == 0 || space == std::string_view::npos || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos) {
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
