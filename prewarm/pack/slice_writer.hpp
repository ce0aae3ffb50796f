// SPDX-License-Identifier: Apache-2.0
// Writes one slice payload: a reproducible pax tar + zstd of a staging
// directory laid out as <kind>/<relative paths>.
//
// Reproducible: entries sorted by byte order, mtime fixed (SOURCE_DATE_EPOCH
// or the bundle's issued-at), uid/gid 0 without names, modes 0644/0755 (0755
// only for owner-executable files, always for dirs), no xattrs/ACLs/atime/
// ctime, libarchive pax_restricted + zstd at a fixed level and worker count.
// Same inputs and time, same libarchive/zstd => byte-identical output.
//
// Names are the manifest's spelling (bundle::encode_entry_path): any
// printable UTF-8 on disk, ASCII in the stream. A symbolic link is archived
// as a link entry when its target is relative and leads to a regular file of
// the same cache (bundle::resolve_link_target); the walk never follows one.
// Refused at build time (so install never meets them), with the path named:
// other links (absolute, leaving the cache, to a directory, to a link, to
// nothing), sockets, fifos, devices, names that are not printable UTF-8,
// top-level entries that are not known cache kinds, files larger than the
// reader's default per-file limit, too deep / too long paths.
// Files with several hard links (nlink > 1) are archived as independent
// regular files (content stored once per name): the reader accepts no hard
// link entries, and caches that hard-link entries work with copies.
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/bundle_manifest.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace prewarm::pack {

inline constexpr int k_zstd_level = 3;
// zstd output with N >= 1 workers is identical for every N, but differs from
// single-threaded (0) mode; pinning 1 keeps the stream format fixed.
inline constexpr int k_zstd_threads = 1;

struct SliceWriteOptions
{
  SysSeconds mtime{};           // every entry's mtime
  int zstd_level = k_zstd_level; // recorded in the producer string
  int zstd_threads = k_zstd_threads;
};

struct WrittenSlice
{
  std::vector<std::string> directories; // sorted, kinds included
  std::vector<bundle::FileEntry> files; // sorted by path
  std::vector<bundle::LinkEntry> links; // sorted by path
  std::string payload_sha256;
  std::uint64_t payload_size = 0;
  std::uint64_t uncompressed_size = 0; // sum of file sizes
};

// Archives `staging_dir` into `output_file` (created new; an existing file is
// an error). A staging directory without any entries is an error.
Result<WrittenSlice> write_slice(const std::filesystem::path& staging_dir,
                                 const std::filesystem::path& output_file,
                                 const SliceWriteOptions& options);

// "libarchive/3.6.2 zstd/1.5.4 level=3 threads=1"
std::string archive_toolchain_description(const SliceWriteOptions& options);

} // namespace prewarm::pack
