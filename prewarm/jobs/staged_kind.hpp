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
#include <vector>

namespace prewarm::jobs {

using bundle::CacheKind;

struct CleanResult
{
  std::uint64_t bookkeeping_removed = 0;
  std::vector<std::string> warnings;
};

// Makes a staged kind directory packageable: removes the kind's bookkeeping
// (bundle::CacheKindRules::capture_bookkeeping) and
// anything that is neither a regular file nor a directory (the bundle writer
// refuses links and special files, and a slice must never carry a link the
// installer would have to trust); warns about names the writer will refuse.
Result<CleanResult> clean_staged_kind(CacheKind kind, const std::filesystem::path& root);

} // namespace prewarm::jobs
