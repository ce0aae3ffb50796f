// SPDX-License-Identifier: Apache-2.0
#include "bundle/payload_verification.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/reader_errors.hpp"

#include <fmt/format.h>

#include <cerrno>

namespace prewarm::bundle {

namespace {

Result<PayloadIdentity>
payload_identity(int fd, const Slice& slice)
{
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    return io_error(fmt::format("slice {}: cannot stat the payload: {}", in_quotes(slice.id), errno_message(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return verify_error("E_PAYLOAD_SIZE", fmt::format("slice {}: payload is not a regular file", in_quotes(slice.id)));
  }
  return PayloadIdentity{st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
}

} // namespace

Status
check_payload_unchanged(int fd, const Slice& slice, const PayloadIdentity& before, std::string_view when)
{
  PW_ASSIGN(const auto now, payload_identity(fd, slice));
  if (!(now == before)) {
    return verify_error("E_PAYLOAD_CHANGED",
                        fmt::format("slice {}: the payload file was modified {} (size {} -> {}, ctime {}.{:09} -> {}.{:09})",
                                    in_quotes(slice.id), when, before.size, now.size, before.changed.tv_sec,
                                    before.changed.tv_nsec, now.changed.tv_sec, now.changed.tv_nsec));
  }
  return {};
}

Result<PayloadIdentity>
verify_payload_identity(int payload_fd, const Slice& slice)
{
  PW_ASSIGN(const auto before, payload_identity(payload_fd, slice));
  if (static_cast<std::uint64_t>(before.size) != slice.payload_size) {
    return verify_error("E_PAYLOAD_SIZE", fmt::format("slice {}: payload is {} bytes, the manifest says {}",
                                                      in_quotes(slice.id), before.size, slice.payload_size));
  }
  auto digest = sha256_hex_of_fd(payload_fd, slice.payload_size);
  if (!digest) {
    // A file that shrank under the hash is a change, not an I/O fault.
    PW_TRY(check_payload_unchanged(payload_fd, slice, before, "while it was hashed"));
    return io_error(fmt::format("slice {}: cannot hash the payload: {}", in_quotes(slice.id), digest.error().message()));
  }
  PW_TRY(check_payload_unchanged(payload_fd, slice, before, "while it was hashed"));
  if (*digest != slice.payload_sha256) {
    return verify_error("E_PAYLOAD_DIGEST", fmt::format("slice {}: payload SHA-256 {} but the manifest says {}",
                                                        in_quotes(slice.id), *digest, slice.payload_sha256));
  }
  return before;
}

Status
verify_payload(int payload_fd, const Slice& slice)
{
  PW_TRY(verify_payload_identity(payload_fd, slice));
  return {};
}

} // namespace prewarm::bundle
