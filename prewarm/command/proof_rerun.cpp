// SPDX-License-Identifier: Apache-2.0
#include "command/proof_rerun.hpp"

#include "audit/access_watch.hpp"
#include "audit/cache_entries.hpp"
#include "audit/triton_groups.hpp"
#include "base/encoding.hpp"
#include "jobs/staged_output.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <limits>
#include <system_error>

namespace prewarm::command {

namespace fs = std::filesystem;

Status
make_proof_copy(const ProofCache& cache)
{
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(cache.captured, ec))) {
    PW_TRY(jobs::copy_for_proof(cache.captured, cache.copy));
  } else if (fs::create_directories(cache.copy, ec); ec) {
    return fail(Errc::failed, fmt::format("cannot create {} for the hit proof: {}", in_quotes(cache.copy.string()),
                                          ec.message()));
  }
  // As the installer does it: Triton's group files point at the copy, never
  // at the capture.
  if (audit::kind_holds_triton_groups(cache.kind)) {
    PW_TRY(audit::relocate_triton_groups(cache.copy, fs::absolute(cache.copy).lexically_normal()));
  }
  if (cache.files == ProofFiles::as_copied) {
    return {};
  }
  PW_ASSIGN(const auto files, audit::list_files(cache.copy));
  for (const auto& file : files) {
    if (audit::is_bookkeeping_path(cache.kind, file)) {
      continue;
    }
    const auto path = cache.copy / file;
    if (::chmod(path.c_str(), 0444) != 0) {
      return fail(Errc::failed, fmt::format("cannot make {} read-only: {}", in_quotes(path.string()),
                                            errno_message(errno)));
    }
  }
  return {};
}

Result<audit::UsageReport>
rerun_on_copies(const std::vector<ProofCache>& caches, const ProofRerun& rerun,
                const std::function<void(const ProofCopies&)>& before_watch)
{
  ProofCopies copies;
  // Every file hashed: a file the re-run opened for writing is new only when
  // its bytes changed (cache_usage.hpp).
  std::map<std::string, audit::FileStates> states;
  for (const auto& cache : caches) {
    PW_TRY(make_proof_copy(cache));
    PW_ASSIGN(states[cache.kind], audit::snapshot_files(cache.copy, std::numeric_limits<std::uint64_t>::max()));
    PW_ASSIGN(copies.before[cache.kind], audit::list_files(cache.copy));
    copies.dirs[cache.kind] = cache.copy;
  }
  if (before_watch) {
    before_watch(copies);
  }
  PW_ASSIGN(auto watch, audit::AccessWatch::start(copies.dirs));
  auto ran = rerun(copies);
  const auto record = watch->stop();
  PW_TRY(std::move(ran));

  audit::UsageReport usage;
  usage.complete = record.complete;
  for (const auto& [kind, dir] : copies.dirs) {
    PW_ASSIGN(const auto after, audit::list_files(dir));
    const auto access = record.kinds.find(kind);
    auto measured = audit::measure_kind(kind, dir, copies.before[kind], after,
                                        access == record.kinds.end() ? nullptr : &access->second, &states[kind]);
    if (measured.files_before > 0 || measured.new_files > 0) {
      usage.kinds.push_back(std::move(measured));
    }
  }
  return usage;
}

std::size_t
new_entries(const audit::UsageReport& usage, std::string_view kind)
{
  const auto* found = usage.find(kind);
  return found == nullptr ? 0 : found->new_entries.size();
}

std::size_t
new_entries(const audit::UsageReport& usage)
{
  std::size_t total = 0;
  for (const auto& k : usage.kinds) {
    total += k.new_entries.size();
  }
  return total;
}

std::optional<std::string>
first_new_entry(const audit::UsageReport& usage)
{
  for (const auto& k : usage.kinds) {
    if (!k.new_entries.empty()) {
      return fmt::format("{}/{}", k.kind, k.new_entries.front().entry);
    }
  }
  return std::nullopt;
}

} // namespace prewarm::command
