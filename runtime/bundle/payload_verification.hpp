// SPDX-License-Identifier: Apache-2.0
// The first read of a slice payload: its size and SHA-256 against the signed
// manifest, before any parser sees a byte of it, and the identity of the file
// those bytes came from, so that the extraction can prove it parsed the same
// bytes (slice_reader.hpp: E_PAYLOAD_CHANGED).
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"

#include <sys/stat.h>

#include <string_view>

namespace prewarm::bundle {

// What must not change between hashing a payload and parsing it: the same
// inode with the same size, modification and change times (a write, a
// truncate or utimensat() moves ctime).
struct PayloadIdentity
{
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  timespec modified{};
  timespec changed{};
  bool operator==(const PayloadIdentity& o) const
  {
    return device == o.device && inode == o.inode && size == o.size && modified.tv_sec == o.modified.tv_sec &&
           modified.tv_nsec == o.modified.tv_nsec && changed.tv_sec == o.changed.tv_sec &&
           changed.tv_nsec == o.changed.tv_nsec;
  }
};


// fstat size == slice.payload_size, then SHA-256 of exactly those bytes by
// pread (the fd offset is untouched), then fstat again.
// E_PAYLOAD_SIZE / E_PAYLOAD_DIGEST / E_PAYLOAD_CHANGED.
Status verify_payload(int payload_fd, const Slice& slice);

// The same, returning the identity the payload was hashed with.
Result<PayloadIdentity> verify_payload_identity(int payload_fd, const Slice& slice);

// E_PAYLOAD_CHANGED when the file behind `fd` is no longer `before`; `when`
// says in the message ("while it was extracted").
Status check_payload_unchanged(int fd, const Slice& slice, const PayloadIdentity& before, std::string_view when);

} // namespace prewarm::bundle
