// SPDX-License-Identifier: Apache-2.0
// SHA-256 through OpenSSL EVP (SHA-NI where the CPU has it): the one digest
// used for bundle payloads, files and cache keys.
#pragma once

#include "base/error.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace prewarm {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256
{
public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  void update(const void* data, std::size_t size);
  // Finishes the digest; the object may not be updated afterwards.
  Sha256Digest finish();
  std::string finish_hex(); // lowercase, 64 characters

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

Sha256Digest sha256(std::string_view bytes);
std::string sha256_hex(std::string_view bytes);

// Digest of exactly the bytes readable from `fd` starting at offset 0, read
// with pread so the descriptor's offset is untouched. `size` caps what is read
// and must equal what is there: a short read is an error (the file shrank).
Result<std::string> sha256_hex_of_fd(int fd, std::uint64_t size);

// Digest of a whole file (opened without following a final symlink).
Result<std::string> sha256_hex_of_file(const std::string& path);

} // namespace prewarm
