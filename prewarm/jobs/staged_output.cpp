// SPDX-License-Identifier: Apache-2.0
#include "jobs/staged_output.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"

#include <fmt/format.h>

#include <string>
#include <system_error>
#include <vector>

namespace prewarm::jobs {

namespace fs = std::filesystem;

Status
create_staged_kinds(const fs::path& staging, std::span<const CacheKind> kinds, ExistingKindDirectory existing)
{
  std::error_code ec;
  fs::create_directories(staging, ec);
  if (ec) {
    return fail(Errc::failed,
                fmt::format("cannot create staging directory {}: {}", in_quotes(staging.string()), ec.message()));
  }
  for (const auto kind : kinds) {
    const auto dir = staging / std::string(to_string(kind));
    const bool created = fs::create_directory(dir, ec);
    if (ec || (!created && existing == ExistingKindDirectory::refuse)) {
      return fail(Errc::failed, fmt::format("cannot create staging directory {}: {}", in_quotes(dir.string()),
                                            ec ? ec.message() : "it exists already"));
    }
  }
  return {};
}

Result<TreeCounts>
count_staged_files(const fs::path& root)
{
  // Opened here: base's count takes a missing directory for an empty one,
  // and a staged tree that is not there is an error.
  const auto dir = open_root_directory(root);
  auto counts = dir ? count_tree(dir->get(), "") : Result<TreeCounts>(fail(dir.error()));
  if (!counts) {
    return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(root.string()), counts.error().message()));
  }
  return counts;
}

Result<std::uint64_t>
prune_empty_kinds(const fs::path& staging)
{
  std::uint64_t files = 0;
  std::vector<fs::path> empty;
  PW_TRY(for_each_entry(staging, [&](const TreeEntry& entry) -> Result<WalkNext> {
    const auto path = staging / entry.relative;
    std::uint64_t in_kind = 0;
    if (entry.is_directory()) {
      PW_ASSIGN(const auto counts, count_staged_files(path));
      in_kind = counts.files;
    }
    if (in_kind == 0) {
      empty.push_back(path);
    }
    files += in_kind;
    return WalkNext::skip;
  }));
  for (const auto& path : empty) {
    PW_TRY(remove_tree(path));
  }
  return files;
}

Result<std::size_t>
merge_staged_tree(const fs::path& from, const fs::path& to, std::string_view job_id)
{
  std::size_t differing = 0;
  bool copy_failed = false;
  const auto merge_entry = [&](const TreeEntry& entry) -> Result<WalkNext> {
    const auto source = from / entry.relative;
    const auto target = to / entry.relative;
    std::error_code ec;
    if (entry.is_directory()) {
      fs::create_directories(target, ec);
      if (ec) {
        return fail(Errc::failed, fmt::format("cannot create {}: {}", target.string(), ec.message()));
      }
    } else if (entry.is_regular_file()) {
      if (fs::exists(target, ec)) {
        PW_ASSIGN(const auto existing, sha256_hex_of_file(target.string()));
        PW_ASSIGN(const auto incoming, sha256_hex_of_file(source.string()));
        if (existing != incoming) {
          log::verbose("{}: {} differs from the copy an earlier job wrote; keeping the first", job_id,
                       entry.relative);
          ++differing;
        }
        return WalkNext::descend;
      }
      fs::copy_file(source, target, ec);
      if (ec) {
        return fail(Errc::failed,
                    fmt::format("{}: copying {} into the slice: {}", job_id, entry.relative, ec.message()));
      }
    } else if (entry.is_symlink()) {
      // A link inside a cache (checked by the job: it leads to a file of
      // the same cache) is copied as a link; the first job's wins.
      if (fs::exists(fs::symlink_status(target, ec))) {
        return WalkNext::descend;
      }
      fs::copy_symlink(source, target, ec);
      if (ec) {
        return fail(Errc::failed,
                    fmt::format("{}: copying the link {} into the slice: {}", job_id, entry.relative, ec.message()));
      }
    } else {
      return fail(Errc::failed, fmt::format("{}: {} is neither a file, a directory nor a link (special files "
                                            "cannot be packaged)",
                                            job_id, source.string()));
    }
    return WalkNext::descend;
  };
  const auto walked = for_each_entry(from, [&](const TreeEntry& entry) -> Result<WalkNext> {
    auto next = merge_entry(entry);
    copy_failed = !next;
    return next;
  });
  if (!walked) {
    // A copy's error names the job already; the walk's names the tree.
    if (copy_failed) {
      return fail(walked.error());
    }
    return fail(Errc::failed, fmt::format("{}: reading {}: {}", job_id, from.string(), walked.error().message()));
  }
  return differing;
}

Status
copy_for_proof(const std::filesystem::path& from, const std::filesystem::path& to)
{
  std::error_code ec;
  std::filesystem::create_directories(to, ec);
  if (!ec) {
    std::filesystem::copy(from, to,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks |
                            std::filesystem::copy_options::overwrite_existing,
                          ec);
  }
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot copy {} to {} for the hit proof: {}", in_quotes(from.string()),
                                          in_quotes(to.string()), ec.message()));
  }
  return {};
}

} // namespace prewarm::jobs
