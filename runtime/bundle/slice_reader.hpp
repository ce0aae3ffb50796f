// SPDX-License-Identifier: Apache-2.0
// Safe extraction of one slice payload (pax tar + zstd) into a staging
// directory. The security-critical reader: see
// docs/research/signing-archives.md §2.3 and §6.4.
//
// Order: the payload's size and SHA-256 are checked against the signed
// manifest FIRST; libarchive sees no byte of a payload that does not match.
// Then libarchive reads tar + zstd only, from the same fd. Every entry must be
// a regular file, directory or symbolic link with a canonical name
// (encode_entry_path) listed in the Slice, seen once, with the listed size and
// SHA-256, or for a link the listed target (which the manifest's validate()
// has checked leads to a file of the slice inside the link's own cache).
// Files, directories and links are created relative to directory fds
// (openat/mkdirat/symlinkat, O_NOFOLLOW, O_EXCL); no path-based write, and no
// link is ever followed. Modes come from the manifest (0644/0755 files, 0755 dirs); owners,
// times, xattrs, ACLs in the archive are ignored (files get the install time,
// so LRU-evicting caches keep them).
//
// The payload is read through the one fd the caller opened: a file renamed
// over its path changes nothing; a write to the same inode (size, mtime or
// ctime moved between the first fstat, the end of the hash and the end of the
// extraction) is E_PAYLOAD_CHANGED, and what was extracted is thrown away.
//
// Errors are Errc::verify with a code, except I/O on the staging side
// (Errc::failed, E_IO):
//   E_PAYLOAD_SIZE E_PAYLOAD_DIGEST E_PAYLOAD_CHANGED E_PAYLOAD_FORMAT E_TYPE E_PATH E_DUPLICATE
//   E_ENTRY_NOT_IN_MANIFEST E_ENTRY_MISSING E_ENTRY_SIZE E_ENTRY_DIGEST E_LINK_TARGET E_LIMIT
#pragma once

#include "base/directory_tree.hpp" // fsync_tree: the installer syncs the extracted tree
#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/payload_verification.hpp" // verify_payload: always before extract_slice

#include <cstdint>

namespace prewarm::bundle {

struct ExtractLimits
{
  std::uint64_t max_payload_bytes = std::uint64_t{16} << 30;       // compressed
  std::uint64_t max_uncompressed_bytes = std::uint64_t{64} << 30;  // sum of file sizes
  std::uint64_t max_entries = 1'000'000;                           // files + dirs + links
  std::uint64_t max_file_bytes = std::uint64_t{8} << 30;           // one file
  std::uint64_t max_path_length = 1024;                            // "<kind>/<rel>"
  std::uint64_t max_depth = 32;                                    // components
  std::uint64_t max_expansion_ratio = 2000; // uncompressed / payload (zstd on zeros ~ 1:1000+)
};

// Extracts `slice` from `payload_fd` into the directory `staging_dirfd`, which
// the caller created empty and private (verify_payload() first, always);
// while the payload is hashed, a second thread creates the directories and
// empty files the signed manifest lists (names only; taken out again if the
// payload is refused); decompression + structure audit, tar parsing + entry
// policy, and per-file hashing + writing run on separate threads
// (slice_reader.cpp); files are not
// fsynced, but their write-back is started (sync_file_range) so that the
// caller's one syncfs() finds little left to do. Entries land at
// staging/<kind>/<rel>. Checks the slice's declared totals against `limits`
// before reading, and counts while reading (a lying manifest stops at the
// declared size + 1 byte). Several slices may be extracted into one staging
// directory: a directory that already exists there (a real directory, not a
// symlink) is reused; a file that exists is E_DUPLICATE.
// On error the staging directory holds a partial tree: the caller removes it.
Status extract_slice(int payload_fd,
                     const Slice& slice,
                     int staging_dirfd,
                     const ExtractLimits& limits = {});

// How many times this process handed a payload to libarchive (extract_slice
// past verify_payload). Tests use it to prove a tampered payload never
// reaches the archive parser.
std::uint64_t archive_reader_open_count();

} // namespace prewarm::bundle
