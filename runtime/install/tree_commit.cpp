// SPDX-License-Identifier: Apache-2.0
#include "install/tree_commit.hpp"

#include "base/directory_tree.hpp"
#include "bundle/cache_kind.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace prewarm::install {

std::string_view
to_string(CommitMethod method)
{
  switch (method) {
  case CommitMethod::renamed: return "renamed";
  }
  return "?";
}

bool
kind_hygiene_removes_files(std::string_view kind)
{
  const auto* rules = bundle::find_kind_rules(kind);
  return rules != nullptr && rules->install_bookkeeping != nullptr;
}

Status
apply_kind_hygiene(int staging_fd, std::string_view kind)
{
  if (!kind_hygiene_removes_files(kind)) {
    return {};
  }
  const auto is_bookkeeping = bundle::find_kind_rules(kind)->install_bookkeeping;
  PW_ASSIGN(UniqueFd top, open_directory_beneath(staging_fd, kind));
  return walk_files(top.get(), std::string(kind), [is_bookkeeping](int dirfd, const std::string& name, const struct stat&) -> Status {
    if (is_bookkeeping(name)) {
      if (::unlinkat(dirfd, name.c_str(), 0) != 0) {
        return fail(tree_io_error("cannot remove", name, errno));
      }
    }
    return {};
  });
}

} // namespace prewarm::install
