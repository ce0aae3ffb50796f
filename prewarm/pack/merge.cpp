// SPDX-License-Identifier: Apache-2.0
#include "pack/merge.hpp"
#include "pack/slice_extras.hpp"

#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/signature.hpp"
#include "bundle/slice_reader.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

namespace prewarm::pack {
namespace {

namespace fs = std::filesystem;

struct Partial
{
  fs::path dir;
  bundle::BundleManifest manifest;
};

// One partial's copy of a slice.
struct SliceCopy
{
  std::size_t partial_index = 0;
  const bundle::Slice* slice = nullptr;
};

std::string
describe(const fs::path& dir)
{
  return fmt::format("partial bundle {}", dir.string());
}

Result<Partial>
load_verified_partial(const fs::path& dir, const bundle::TrustStore& trust, SysSeconds now)
{
  PW_ASSIGN_CTX(auto files, describe(dir), bundle::load_bundle_files(dir));
  // Signature over the exact bytes before a byte of the manifest is parsed.
  PW_TRY_CTX(describe(dir),
             bundle::verify_manifest_signature(files.manifest_bytes, files.envelope_bytes, trust, now));
  PW_ASSIGN_CTX(auto manifest, describe(dir), bundle::parse(files.manifest_bytes));
  if (manifest.expires <= now) {
    return fail(Errc::verify,
                fmt::format("{}: expired at {} (now {}); rebuild the shards (expiry is issued-at, "
                            "SOURCE_DATE_EPOCH when set, plus the manifest's bundle.expires)",
                            describe(dir), format_rfc3339(manifest.expires), format_rfc3339(now)),
                "E_EXPIRED");
  }
  return Partial{dir, std::move(manifest)};
}

Status
mismatch(const Partial& first, const Partial& other, std::string_view field, std::string_view a,
         std::string_view b)
{
  return fail(Errc::verify,
              fmt::format("{} and {} come from different builds: {} '{}' vs '{}' (merge the shards "
                          "of one `prewarm build` run)",
                          describe(first.dir), describe(other.dir), field, a, b),
              "E_MERGE_MISMATCH");
}

// The producer line is "producer_string(spec without extra)[ <extra>]".
// The base part names prewarm, libarchive and zstd versions: the merged
// bundle is written by this prewarm, so a partial made by another version
// could not be reproduced byte for byte and is refused.
Result<std::string>
producer_extra_of(const Partial& partial)
{
  const std::string base = producer_string(BundleSpec{});
  const std::string& producer = partial.manifest.producer;
  if (producer == base) {
    return std::string();
  }
  if (producer.size() > base.size() + 1 && producer.starts_with(base) && producer[base.size()] == ' ') {
    return producer.substr(base.size() + 1);
  }
  return fail(Errc::verify,
              fmt::format("{}: producer '{}' is not this prewarm's '{}' (merge with the prewarm "
                          "version and libraries that built the shards)",
                          describe(partial.dir), producer, base),
              "E_MERGE_MISMATCH");
}

Status
check_same_build(const std::vector<Partial>& partials)
{
  const Partial& first = partials.front();
  PW_ASSIGN(const std::string first_extra, producer_extra_of(first));
  for (std::size_t i = 1; i < partials.size(); ++i) {
    const Partial& other = partials[i];
    const auto& a = first.manifest;
    const auto& b = other.manifest;
    if (a.build_manifest_sha256 != b.build_manifest_sha256) {
      return mismatch(first, other, "build-manifest", a.build_manifest_sha256, b.build_manifest_sha256);
    }
    if (a.channel != b.channel) {
      return mismatch(first, other, "channel", a.channel, b.channel);
    }
    if (a.serial != b.serial) {
      return mismatch(first, other, "serial", std::to_string(a.serial), std::to_string(b.serial));
    }
    PW_ASSIGN(const std::string extra, producer_extra_of(other));
    if (extra != first_extra) {
      return mismatch(first, other, "producer", a.producer, b.producer);
    }
  }
  return {};
}

// `prewarm build` writes job lines as "<job id> <details>", the id being
// "<target>/<model>/<precision>". Details (strategy, executor, device) may
// differ between runners, so the same id in two lines is the same job.
std::string
job_key(const std::string& job_line)
{
  const std::string first = job_line.substr(0, job_line.find(' '));
  return first.find('/') != std::string::npos ? first : job_line;
}

// The smallest job key of a slice copy: orders copies as a monolithic
// build orders its jobs.
std::string
first_job_key(const bundle::Slice& slice)
{
  std::string first;
  for (const auto& job : slice.jobs) {
    const std::string key = job_key(job);
    if (first.empty() || key < first) {
      first = key;
    }
  }
  return first;
}

// The same job in two partials means the shards overlapped. One job may
// fill several slices of its own partial (an Intel job: its AOT slice and
// the NEO slice of the card's entries).
Status
check_jobs_disjoint(const std::vector<Partial>& partials, std::size_t& job_count)
{
  std::map<std::string, std::size_t> owner;
  for (std::size_t i = 0; i < partials.size(); ++i) {
    for (const auto& slice : partials[i].manifest.slices) {
      for (const auto& job : slice.jobs) {
        const auto [it, inserted] = owner.emplace(job_key(job), i);
        if (!inserted && it->second != i) {
          return fail(Errc::verify,
                      fmt::format("job '{}' is in both {} and {} (shards overlap: were they built "
                                  "with the same --shard I/N, or is one partial given twice?)",
                                  job, describe(partials[it->second].dir), describe(partials[i].dir)),
                      "E_MERGE_DUPLICATE");
        }
      }
    }
  }
  job_count = owner.size();
  return {};
}

// Same id => same target identity => same requirements. A path held by two
// copies with different bytes or modes is kept from the first copy (copies
// are ordered by their first job id, the order a monolithic build runs its
// jobs in) and counted: `prewarm build` keeps the first of two differing
// copies too, because PoCL writes different bytes for the same cache key in
// different processes. Returns the paths that differed.
Result<std::vector<std::string>>
check_copies_agree(const std::string& id,
                   const std::vector<SliceCopy>& copies,
                   const std::vector<Partial>& partials)
{
  const SliceCopy& first = copies.front();
  std::map<std::string, std::pair<const bundle::FileEntry*, std::size_t>> seen;
  std::vector<std::string> differing;
  for (const auto& copy : copies) {
    if (copy.slice->requirements != first.slice->requirements) {
      return fail(Errc::verify,
                  fmt::format("slice '{}' has different requirements in {} and {}", id,
                              describe(partials[first.partial_index].dir),
                              describe(partials[copy.partial_index].dir)),
                  "E_MERGE_CONFLICT");
    }
    for (const auto& file : copy.slice->files) {
      const auto [it, inserted] = seen.emplace(file.path, std::pair{&file, copy.partial_index});
      if (!inserted && (it->second.first->sha256 != file.sha256 || it->second.first->mode != file.mode)) {
        log::verbose("slice '{}': {} differs between {} (kept) and {}", id, file.path,
                     describe(partials[it->second.second].dir), describe(partials[copy.partial_index].dir));
        differing.push_back(file.path);
      }
    }
  }
  return differing;
}

Result<UniqueFd>
open_directory(const fs::path& dir)
{
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return fail(Errc::failed, fmt::format("cannot open directory {}: {}", dir.string(), errno_message(errno)),
                "E_IO");
  }
  return UniqueFd(fd);
}

// The entry time the slice writer stored (every entry has the same one).
// Called only on a payload whose digest matched the signed manifest.
Result<std::optional<SysSeconds>>
archived_entry_time(int payload_fd, const std::string& origin)
{
  if (::lseek(payload_fd, 0, SEEK_SET) != 0) {
    return fail(Errc::failed, fmt::format("{}: lseek: {}", origin, errno_message(errno)), "E_IO");
  }
  const std::unique_ptr<archive, decltype(&archive_read_free)> reader(archive_read_new(), archive_read_free);
  if (!reader) {
    return fail(Errc::failed, "libarchive: out of memory");
  }
  archive_read_support_format_tar(reader.get());
  archive_read_support_filter_zstd(reader.get());
  if (archive_read_open_fd(reader.get(), payload_fd, 64 * 1024) != ARCHIVE_OK) {
    return fail(Errc::verify, fmt::format("{}: {}", origin, archive_error_string(reader.get())),
                "E_PAYLOAD_FORMAT");
  }
  archive_entry* entry = nullptr;
  const int status = archive_read_next_header(reader.get(), &entry);
  if (status == ARCHIVE_EOF) {
    return std::optional<SysSeconds>();
  }
  if (status != ARCHIVE_OK) {
    return fail(Errc::verify, fmt::format("{}: {}", origin, archive_error_string(reader.get())),
                "E_PAYLOAD_FORMAT");
  }
  return std::optional<SysSeconds>(SysSeconds(std::chrono::seconds(archive_entry_mtime(entry))));
}

// Extracts one verified copy of a slice into `staging` (which may already
// hold other copies' entries: existing directories are shared, files and
// links that exist are skipped: the first copy's is kept).
Status
extract_copy(const Partial& partial,
             const bundle::Slice& slice,
             const fs::path& scratch,
             const fs::path& staging,
             std::set<SysSeconds>& entry_times)
{
  const std::string origin = fmt::format("{}: slice {}", describe(partial.dir), slice.id);
  PW_ASSIGN_CTX(auto payload, describe(partial.dir), bundle::open_slice_payload(partial.dir, slice.id));
  PW_ASSIGN(auto private_dir, make_private_directory(scratch, "copy-"));
  PW_ASSIGN(auto dirfd, open_directory(private_dir));
  // extract_slice verifies size and digest before libarchive sees a byte.
  PW_TRY_CTX(origin, bundle::extract_slice(payload.get(), slice, dirfd.get()));
  PW_ASSIGN(const auto entry_time, archived_entry_time(payload.get(), origin));
  if (entry_time) {
    entry_times.insert(*entry_time);
  }
  std::error_code ec;
  fs::copy(private_dir, staging,
           fs::copy_options::recursive | fs::copy_options::skip_existing | fs::copy_options::skip_symlinks, ec);
  if (ec) {
    return fail(Errc::failed,
                fmt::format("{}: copying into the merge staging directory {}: {}", origin, staging.string(),
                            ec.message()),
                "E_IO");
  }
  // A cache's links, as the verified manifest states them (the first copy's
  // wins, as for files); fs::copy refuses a link whose name exists.
  for (const auto& link : slice.links) {
    const auto at = staging / link.path;
    if (fs::exists(fs::symlink_status(at, ec))) {
      continue;
    }
    fs::create_symlink(link.target, at, ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("{}: creating the link {}: {}", origin, at.string(), ec.message()), "E_IO");
    }
  }
  return remove_tree(private_dir);
}

// The copies of each slice id across the partials, first job first, checked
// to agree (files that differ are counted and warned about).
Result<std::map<std::string, std::vector<SliceCopy>>>
group_slice_copies(const std::vector<Partial>& partials, MergeResult& result)
{
  std::map<std::string, std::vector<SliceCopy>> copies_by_id; // sorted ids: stable staging names
  for (std::size_t i = 0; i < partials.size(); ++i) {
    for (const auto& slice : partials[i].manifest.slices) {
      copies_by_id[slice.id].push_back(SliceCopy{i, &slice});
    }
  }
  for (auto& [id, copies] : copies_by_id) {
    std::sort(copies.begin(), copies.end(), [](const SliceCopy& a, const SliceCopy& b) {
      return first_job_key(*a.slice) < first_job_key(*b.slice);
    });
    PW_ASSIGN(const auto differing, check_copies_agree(id, copies, partials));
    if (!differing.empty()) {
      log::warn("slice '{}': {} file(s) differ between the partials (e.g. {}); kept the copy of the first "
                "job, as `prewarm build` does",
                id, differing.size(), differing.front());
      result.differing_files += differing.size();
    }
  }

  return copies_by_id;
}

// The merged header: the first partial's, issued at the latest, expiring at
// the earliest, checked as a build checks its own.
Result<BundleSpec>
merged_header(const std::vector<Partial>& partials, SysSeconds now, ExpiryPolicy expiry)
{
  BundleSpec spec;
  const auto& first = partials.front().manifest;
  spec.channel = first.channel;
  spec.serial = first.serial;
  spec.build_manifest_sha256 = first.build_manifest_sha256;
  PW_ASSIGN(spec.producer_extra, producer_extra_of(partials.front()));
  spec.issued_at = first.issued_at;
  spec.expires = first.expires;
  for (const auto& partial : partials) {
    spec.issued_at = std::max(spec.issued_at, partial.manifest.issued_at);
    spec.expires = std::min(spec.expires, partial.manifest.expires);
  }
  PW_TRY(check_bundle_expiry("the merged bundle", spec.issued_at, spec.expires, now, expiry));

  return spec;
}

// One slice of the merge: every copy extracted into one staging directory.
Result<SliceInput>
merge_slice(const std::string& id, const std::vector<SliceCopy>& copies, const std::vector<Partial>& partials,
            const fs::path& scratch, std::set<SysSeconds>& entry_times)
{
  const fs::path staging = scratch / ("slice-" + id);
  std::error_code ec;
  fs::create_directory(staging, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("merge: cannot create {}: {}", staging.string(), ec.message()), "E_IO");
  }
  SliceInput input;
  input.id = id;
  input.staging_dir = staging;
  input.requirements = copies.front().slice->requirements;
  for (const auto& copy : copies) {
    PW_TRY(extract_copy(partials[copy.partial_index], *copy.slice, scratch, staging, entry_times));
    input.jobs.insert(input.jobs.end(), copy.slice->jobs.begin(), copy.slice->jobs.end());
    input.site_packages.insert(input.site_packages.end(), copy.slice->site_packages.begin(),
                               copy.slice->site_packages.end());
    if (auto joined = join_slice_extras(input, copy.slice->caches, copy.slice->environment,
                                        describe(partials[copy.partial_index].dir));
        !joined) {
      return fail(Error(Errc::verify, joined.error().message(), "E_MERGE_CONFLICT"));
    }
  }
  std::sort(input.jobs.begin(), input.jobs.end());
  return input;
}

} // namespace

Result<MergeResult>
merge_bundles(std::span<const fs::path> partial_dirs, const bundle::TrustStore& trust, std::span<const PrivateKey> keys,
              const fs::path& out_dir, SysSeconds now, ExpiryPolicy expiry)
{
  if (partial_dirs.empty()) {
    return fail(Errc::usage, "merge: no partial bundles given");
  }
  if (keys.empty()) {
    return fail(Errc::usage, "merge: no signing key given (--key)");
  }
  PW_TRY_CTX("merge: trust", bundle::validate_trust_store(trust));

  // Everything is verified and checked before anything is written.
  std::vector<Partial> partials;
  partials.reserve(partial_dirs.size());
  for (const auto& dir : partial_dirs) {
    PW_ASSIGN(auto partial, load_verified_partial(dir, trust, now));
    partials.push_back(std::move(partial));
  }
  PW_TRY(check_same_build(partials));
  MergeResult result;
  result.partial_count = partials.size();
  PW_TRY(check_jobs_disjoint(partials, result.job_count));

  PW_ASSIGN(const auto copies_by_id, group_slice_copies(partials, result));
  PW_ASSIGN(auto scratch, TempDir::create("prewarm-merge-"));
  PW_ASSIGN(auto spec, merged_header(partials, now, expiry));
  std::set<SysSeconds> entry_times;
  for (const auto& [id, copies] : copies_by_id) {
    PW_ASSIGN(auto input, merge_slice(id, copies, partials, scratch.path(), entry_times));
    if (copies.size() > 1) {
      result.joined_slice_ids.push_back(id);
    }
    spec.slices.push_back(std::move(input));
  }
  if (!entry_times.empty()) {
    // Every shard built with one SOURCE_DATE_EPOCH => one time. Otherwise the
    // latest is used and the merged bundle cannot equal a monolithic build.
    spec.archive_mtime = *entry_times.rbegin();
    if (entry_times.size() > 1) {
      log::warn("partials were archived with {} different entry times; the merged slices use {} (build "
                "every shard with the same SOURCE_DATE_EPOCH to make the merge reproducible)",
                entry_times.size(), format_rfc3339(*spec.archive_mtime));
    }
  }
  PW_ASSIGN_CTX(result.bundle, "merge", write_bundle(spec, keys, out_dir));
  return result;
}

} // namespace prewarm::pack
