// SPDX-License-Identifier: Apache-2.0
#include "pack/key_pair.hpp"
#include "bundle/openssl_error.hpp"

#include "base/encoding.hpp"
#include "base/files.hpp"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace prewarm::pack {

using bundle::openssl_error;

namespace {

constexpr std::uint64_t k_max_key_file = 16 * 1024;

Result<bundle::PublicKey>
public_half(EVP_PKEY* key)
{
  unsigned char* der = nullptr;
  const int length = i2d_PUBKEY(key, &der);
  if (length <= 0) {
    return fail(Errc::internal, "cannot encode the public key: " + openssl_error());
  }
  const std::string bytes(reinterpret_cast<const char*>(der), static_cast<std::size_t>(length));
  OPENSSL_free(der);
  return bundle::PublicKey::from_der(bytes);
}

Status
write_all(int fd, std::string_view bytes)
{
  while (!bytes.empty()) {
    const ssize_t put = ::write(fd, bytes.data(), bytes.size());
    if (put < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail(Errc::failed, errno_message(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(put));
  }
  return {};
}

// Creates `path` new (O_EXCL) with `mode` from the first byte on.
Status
create_exclusive(const std::filesystem::path& path, std::string_view bytes, mode_t mode)
{
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) {
    const int e = errno;
    if (e == EEXIST) {
      return fail(Errc::usage, fmt::format("{} already exists (refusing to overwrite a key; pass --force to replace it)", in_quotes(path.string())));
    }
    return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(path.string()), errno_message(e)));
  }
  if (::fchmod(fd.get(), mode) != 0) {
    return fail(Errc::failed, fmt::format("cannot chmod {}: {}", in_quotes(path.string()), errno_message(errno)));
  }
  if (auto s = write_all(fd.get(), bytes); !s || ::fsync(fd.get()) != 0) {
    const std::string why = s ? errno_message(errno) : s.error().message();
    ::unlink(path.c_str());
    return fail(Errc::failed, fmt::format("cannot write {}: {}", in_quotes(path.string()), why));
  }
  return {};
}

std::filesystem::path
with_suffix(const std::filesystem::path& prefix, std::string_view suffix)
{
  return std::filesystem::path(prefix.string() + std::string(suffix));
}

} // namespace

PrivateKey::PrivateKey(std::shared_ptr<evp_pkey_st> key, bundle::PublicKey public_key)
  : m_key(std::move(key)), m_public(std::move(public_key))
{
}

Result<PrivateKey>
PrivateKey::generate()
{
  EVP_PKEY* raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (raw == nullptr) {
    return fail(Errc::internal, "cannot generate an Ed25519 key: " + openssl_error());
  }
  std::shared_ptr<evp_pkey_st> key(raw, &EVP_PKEY_free);
  PW_ASSIGN(auto pub, public_half(raw));
  return PrivateKey(std::move(key), std::move(pub));
}

Result<PrivateKey>
PrivateKey::from_pem(std::string_view pem, std::string_view origin)
{
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) {
    return fail(Errc::internal, "BIO_new_mem_buf failed");
  }
  EVP_PKEY* raw = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (raw == nullptr) {
    return fail(Errc::usage, fmt::format("{}: not a PEM private key (\"BEGIN PRIVATE KEY\"): {}", origin, openssl_error()));
  }
  std::shared_ptr<evp_pkey_st> key(raw, &EVP_PKEY_free);
  if (EVP_PKEY_get_id(raw) != EVP_PKEY_ED25519) {
    return fail(Errc::usage, fmt::format("{}: a {} key; prewarm signs with Ed25519 (make one with `prewarm keygen`)", origin, OBJ_nid2sn(EVP_PKEY_get_id(raw))));
  }
  PW_ASSIGN(auto pub, public_half(raw));
  return PrivateKey(std::move(key), std::move(pub));
}

Result<PrivateKey>
PrivateKey::load(const std::filesystem::path& key_file)
{
  const std::string name = key_file.string();
  auto opened = open_regular_file(name);
  if (!opened) {
    return fail(Error(Errc::usage, opened.error().message() +
                                                   " (--key takes the private key NAME.key that "
                                                   "`prewarm keygen --out NAME` writes)",
                      "E_KEY")
                  .wrap(fmt::format("private key {}", in_quotes(name))));
  }
  UniqueFd fd = std::move(*opened);
  // Before the mode check: a public key is 0644 on purpose, and "chmod 600"
  // would send the user the wrong way.
  if (auto head = read_file(name, k_max_key_file);
      key_file.extension() == ".pub" || (head && head->find("BEGIN PUBLIC KEY") != std::string::npos)) {
    auto private_name = key_file;
    private_name.replace_extension(".key");
    return fail(Errc::usage,
                fmt::format("private key {}: this is a public key; --key takes the private key NAME.key ({}?)",
                            in_quotes(name), private_name.string()),
                "E_KEY");
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) {
    return fail(Errc::failed, fmt::format("cannot stat {}: {}", in_quotes(name), errno_message(errno)));
  }
  if ((st.st_mode & 077) != 0) {
    return fail(Errc::usage, fmt::format("private key {} is readable by group or others (mode {:04o}); refusing to use it "
                                         "(hint: chmod 600 {})", in_quotes(name), st.st_mode & 07777, name));
  }
  PW_ASSIGN_CTX(const auto pem, fmt::format("private key {}", in_quotes(name)), read_input_file(name, k_max_key_file));
  return from_pem(pem, name);
}

Result<std::string>
PrivateKey::sign(std::string_view message) const
{
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, m_key.get()) != 1) {
    return fail(Errc::internal, "EVP_DigestSignInit: " + openssl_error());
  }
  std::string signature(bundle::k_ed25519_signature_size, '\0');
  std::size_t length = signature.size();
  // PureEdDSA: one shot over the whole message (OpenSSL 3.0 has no streaming Ed25519).
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      length != bundle::k_ed25519_signature_size) {
    return fail(Errc::internal, "EVP_DigestSign: " + openssl_error());
  }
  return signature;
}

std::string
PrivateKey::to_pem() const
{
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (!bio || PEM_write_bio_PKCS8PrivateKey(bio.get(), m_key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return {};
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(length));
}

Result<KeyFiles>
generate_key_pair(const std::filesystem::path& out_prefix, ExistingKeyFiles existing)
{
  if (out_prefix.empty() || out_prefix.filename().empty()) {
    return fail(Errc::usage, fmt::format("key prefix {} must name a file (e.g. keys/release)", in_quotes(out_prefix.string())));
  }
  KeyFiles files{with_suffix(out_prefix, ".key"), with_suffix(out_prefix, ".pub"), {}};
  const auto parent = out_prefix.has_parent_path() ? out_prefix.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::exists(parent, ec)) {
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(parent.string()), ec.message()));
    }
    std::filesystem::permissions(parent, std::filesystem::perms::owner_all, ec);
  }
  PW_ASSIGN(const auto key, PrivateKey::generate());
  const std::string private_pem = key.to_pem();
  const std::string public_pem = key.public_key().to_pem();
  if (private_pem.empty() || public_pem.empty()) {
    return fail(Errc::internal, "cannot encode the new key pair as PEM");
  }
  files.key_id = key.key_id();

  if (existing == ExistingKeyFiles::refuse) {
    for (const auto& path : {files.private_key, files.public_key}) {
      if (std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found) {
        return fail(Errc::usage, fmt::format("{} already exists (refusing to overwrite a key; pass --force to replace it)", in_quotes(path.string())));
      }
    }
    PW_TRY(create_exclusive(files.private_key, private_pem, 0600));
    if (auto s = create_exclusive(files.public_key, public_pem, 0644); !s) {
      ::unlink(files.private_key.c_str());
      return fail(s.error());
    }
    return files;
  }
  // Replace: new files beside the old ones (the key is 0600 from creation,
  // mkostemp's default), then rename over.
  PW_TRY(write_file_atomic(files.private_key, private_pem, 0600, Durability::fsync));
  PW_TRY(write_file_atomic(files.public_key, public_pem, 0644, Durability::fsync));
  return files;
}

} // namespace prewarm::pack
