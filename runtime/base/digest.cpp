// SPDX-License-Identifier: Apache-2.0
#include "base/digest.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

namespace prewarm {

struct Sha256::Impl
{
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>())
{
  m_impl->ctx = EVP_MD_CTX_new();
  if (!m_impl->ctx || EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr) != 1) {
    // Only out-of-memory gets here; there is no meaningful recovery.
    throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
  }
}

Sha256::~Sha256()
{
  if (m_impl) {
    EVP_MD_CTX_free(m_impl->ctx);
  }
}

Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void
Sha256::update(const void* data, std::size_t size)
{
  EVP_DigestUpdate(m_impl->ctx, data, size);
}

void
Sha256::update(std::string_view bytes)
{
  update(bytes.data(), bytes.size());
}

Sha256Digest
Sha256::finish()
{
  Sha256Digest out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(m_impl->ctx, out.data(), &len);
  return out;
}

std::string
Sha256::finish_hex()
{
  const auto d = finish();
  return to_hex(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

Sha256Digest
sha256(std::string_view bytes)
{
  Sha256 h;
  h.update(bytes);
  return h.finish();
}

std::string
sha256_hex(std::string_view bytes)
{
  Sha256 h;
  h.update(bytes);
  return h.finish_hex();
}

Result<std::string>
sha256_hex_of_fd(int fd, std::uint64_t size)
{
  Sha256 h;
  std::vector<char> buf(1 << 20);
  std::uint64_t offset = 0;
  while (offset < size) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - offset));
    const ssize_t got = ::pread(fd, buf.data(), want, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail(Errc::failed, "read: " + errno_message(errno));
    }
    if (got == 0) {
      return fail(Errc::verify,
                  fmt::format("file ended after {} of {} bytes", offset, size),
                  "E_PAYLOAD_SIZE");
    }
    h.update(buf.data(), static_cast<std::size_t>(got));
    offset += static_cast<std::uint64_t>(got);
  }
  return h.finish_hex();
}

Result<std::string>
sha256_hex_of_file(const std::string& path)
{
  PW_ASSIGN(UniqueFd fd, open_regular_file(path));
  PW_ASSIGN(const auto size, file_size(fd.get()));
  PW_ASSIGN_CTX(auto hex, in_quotes(path), sha256_hex_of_fd(fd.get(), size));
  return hex;
}

} // namespace prewarm
