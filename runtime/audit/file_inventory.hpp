// SPDX-License-Identifier: Apache-2.0
// The regular files of a cache directory, as paths relative to it. Taken
// before an application runs (or recorded at install time), it is what
// "already there" means; everything found afterwards that is not in it was
// written anew.
//
// Inventory file (ROOT/.prewarm/files, written by the installer):
//   "prewarm-files 1" LF
//   (KIND " " RELATIVE-PATH LF)*    sorted; paths hold no spaces or newlines
//                                   (the bundle grammar's [A-Za-z0-9._+-]
//                                   components joined by "/")
#pragma once

#include "base/error.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace prewarm::audit {

using FileSet = std::set<std::string>; // relative paths, "/"-separated

// Every regular file under `dir` (links and special files are not followed
// or listed). A missing directory is an empty set.
Result<FileSet> list_files(const std::filesystem::path& dir);

// kind name -> its files.
using Inventory = std::map<std::string, FileSet, std::less<>>;

std::string serialize(const Inventory& inventory);
Result<Inventory> parse_inventory(std::string_view text);

} // namespace prewarm::audit
