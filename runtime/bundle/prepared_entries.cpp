// SPDX-License-Identifier: Apache-2.0
#include "bundle/prepared_entries.hpp"

#include "base/directory_tree.hpp"
#include "base/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <string_view>
#include <utility>

namespace prewarm::bundle {

void
prepare_entries(int staging, const Slice& slice, PreparedEntries& prepared)
{
  auto& created = prepared.files;
  created.assign(slice.files.size(), 0);
  std::vector<std::pair<std::string_view, std::size_t>> entries; // path, file index or npos for a directory
  entries.reserve(slice.directories.size() + slice.files.size());
  constexpr auto directory = std::numeric_limits<std::size_t>::max();
  for (const auto& dir : slice.directories) {
    entries.emplace_back(dir, directory);
  }
  for (std::size_t i = 0; i < slice.files.size(); ++i) {
    entries.emplace_back(slice.files[i].path, i);
  }
  std::sort(entries.begin(), entries.end()); // a parent sorts before what is in it
  std::vector<std::pair<std::string_view, UniqueFd>> stack; // open directories along the last path
  for (const auto& [path, index] : entries) {
    const auto parent = parent_of(path);
    while (!stack.empty() && stack.back().first != parent) {
      stack.pop_back();
    }
    if (!parent.empty() && stack.empty()) {
      continue; // its directory was not made here: the extraction handles it
    }
    const int parent_fd = parent.empty() ? staging : stack.back().second.get();
    const std::string leaf(leaf_of(path));
    if (index == directory) {
      if (::mkdirat(parent_fd, leaf.c_str(), 0700) == 0) {
        prepared.directories.emplace_back(path);
      } else if (errno != EEXIST) {
        continue;
      }
      UniqueFd dir(::openat(parent_fd, leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (dir) {
        stack.emplace_back(path, std::move(dir));
      }
      continue;
    }
    UniqueFd file(::openat(parent_fd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    created[index] = file ? 1 : 0;
  }
}

void
unprepare_entries(int staging, const Slice& slice, const PreparedEntries& prepared)
{
  for (std::size_t i = slice.files.size(); i-- > 0;) {
    if (i < prepared.files.size() && prepared.files[i] != 0) {
      const auto& path = slice.files[i].path;
      if (auto parent = open_directory_beneath(staging, parent_of(path))) {
        ::unlinkat(parent->get(), std::string(leaf_of(path)).c_str(), 0);
      }
    }
  }
  for (auto it = prepared.directories.rbegin(); it != prepared.directories.rend(); ++it) {
    if (auto parent = open_directory_beneath(staging, parent_of(*it))) {
      ::unlinkat(parent->get(), std::string(leaf_of(*it)).c_str(), AT_REMOVEDIR);
    }
  }
}

} // namespace prewarm::bundle
