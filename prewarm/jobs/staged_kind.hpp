// SPDX-License-Identifier: Apache-2.0
// What every executor does to a staged kind directory before it is packaged:
// drop the bookkeeping a driver keeps beside its entries, and anything a slice
// must not carry. Here, below the executors, so the built-in and command
// executors share it without one reaching into the other.
#pragma once

#include "base/error.hpp"
#include "bundle/cache_kind.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::jobs {

using bundle::CacheKind;

struct CleanResult
{
  std::uint64_t bookkeeping_removed = 0;
  std::vector<std::string> warnings;
  // What the bundle writer would refuse, one line each naming the path and
  // the rule: the job must fail now, not after every job ran (a slice that is
  // never written must never be reported as made).
  std::vector<std::string> refusals;
};

// Makes a staged tree packageable, or says why it cannot be:
//   - bookkeeping (`is_bookkeeping`, may be null) is removed;
//   - a symbolic link that leads to a regular file of the tree (relative, no
//     climb out of it) is part of the cache's structure (darktable finds
//     each program's binary through one) and ships as a link entry;
//   - any other link (absolute, leaving the tree, to a directory, to another
//     link, to nothing), socket, fifo or device is a refusal naming the file
//     and the rule: the cache cannot ship as it is;
//   - a name that is not 1..255 bytes of printable UTF-8 is a refusal
//     (spaces, parentheses and non-ASCII letters are carried);
//   - an entry whose path in the slice ("<tree>/<relative>") is over the
//     PATH rule's length or depth (bundle::check_entry_path_limits, which
//     the slice writer applies too) is a refusal; nothing below it is looked
//     at.
// `tree` is the tree's name in a slice ("pocl", "custom/clfft"); messages
// name it "pocl", "custom cache clfft".
Result<CleanResult> clean_staged_tree(std::string_view tree,
                                      const std::filesystem::path& root,
                                      bool (*is_bookkeeping)(std::string_view name));

// clean_staged_tree() with the kind's bookkeeping
// (bundle::CacheKindRules::capture_bookkeeping).
Result<CleanResult> clean_staged_kind(CacheKind kind, const std::filesystem::path& root);

} // namespace prewarm::jobs
