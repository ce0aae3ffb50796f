// SPDX-License-Identifier: Apache-2.0
#include "registry/registry_client.hpp"
#include "registry/registry_fetch.hpp"
#include "registry/curl_library.hpp"

#include "base/digest.hpp"
#include "base/directory_tree.hpp"
#include "base/files.hpp"
#include "base/log.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace prewarm::registry {

namespace {

namespace fs = std::filesystem;

std::string
manifest_accept_header()
{
  return fmt::format("Accept: {}, {}", k_image_manifest_type, k_docker_manifest_type);
}

Error
io_error(std::string_view what, const std::string& path, int error_number)
{
  return Error(Errc::failed, fmt::format("{} {}: {}", what, path, errno_message(error_number)), "E_IO");
}

// SHA-256 of the first `size` bytes of `fd` into `hasher`.
Status
hash_prefix(int fd, std::uint64_t size, Sha256& hasher, const std::string& path)
{
  std::array<char, 1 << 16> buffer{};
  std::uint64_t offset = 0;
  while (offset < size) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), size - offset));
    const auto n = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset));
    if (n <= 0) {
      return fail(io_error("cannot read", path, n < 0 ? errno : EIO));
    }
    hasher.update(buffer.data(), static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
  return {};
}

Error
unsafe_entry(std::string_view where, const std::string& name, std::string_view why)
{
  return Error(Errc::failed, fmt::format("{}: {}", join_relative(where, name), why), "E_DOWNLOAD_DIR");
}

// The partial download NAME.partial in `dirfd`, opened for resuming, or
// created anew (O_EXCL). What is there and is not a regular file of ours
// with one link (a FIFO, a directory, a symlink, a hard link to a file
// elsewhere) was not left by a download: it is removed, and the file is
// created once more; a second failure is an error.
Result<UniqueFd>
open_partial(int dirfd, const std::string& partial, std::string_view where)
{
  for (int round = 0; round < 2; ++round) {
    UniqueFd fd(::openat(dirfd, partial.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd && errno == ENOENT) {
      fd.reset(::openat(dirfd, partial.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!fd) {
        return fail(unsafe_entry(where, partial, fmt::format("cannot create: {}", errno_message(errno))));
      }
    }
    struct stat st{};
    if (fd && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_uid == ::geteuid()) {
      if (::fchmod(fd.get(), 0600) != 0) {
        return fail(tree_io_error("cannot chmod", join_relative(where, partial), errno));
      }
      return fd;
    }
    const auto what = !fd ? errno_message(errno)
                          : (S_ISREG(st.st_mode) ? fmt::format("{} links, owner {}", st.st_nlink, st.st_uid)
                                                 : std::string(file_type_name(st.st_mode)));
    log::warn("{}: a leftover that is not a partial download ({}): removed", join_relative(where, partial), what);
    fd.reset();
    PW_TRY(remove_leftover(dirfd, partial, where));
  }
  return fail(unsafe_entry(where, partial, "replaced again while it was being created"));
}

// One try of a resumable download: append to `partial` from where it ends.
Result<bool>
download_once(RegistryClient& client, const std::string& path, const std::string& digest, std::uint64_t size,
              int dirfd, const std::string& partial, std::string_view where)
{
  PW_ASSIGN(UniqueFd fd, open_partial(dirfd, partial, where));
  PW_ASSIGN(std::uint64_t offset, file_size(fd.get()));
  if (offset > size && ::ftruncate(fd.get(), 0) == 0) {
    offset = 0;
  }
  Sha256 hasher;
  PW_TRY(hash_prefix(fd.get(), offset, hasher, join_relative(where, partial)));
  std::uint64_t written = offset;

  HttpRequest request;
  request.path = path;
  request.transfer_bytes = size - std::min(size, offset);
  if (offset > 0 && offset < size) {
    request.headers.push_back(fmt::format("Range: bytes={}-", offset));
    log::verbose("resuming {} at byte {} of {}", digest, offset, size);
  }
  request.on_start = [&](const HttpResponse& response) -> Status {
    if (response.status == 206 && offset > 0) {
      const auto range = response.header("content-range");
      if (!range.starts_with(fmt::format("bytes {}-", offset))) {
        return fail(Errc::failed, fmt::format("asked for bytes {}- of {}, the registry sent {}", offset, digest,
                                              range.empty() ? "no Content-Range" : range),
                    std::string(k_unavailable));
      }
      return {};
    }
    // A whole answer (the registry or CDN ignored Range): start over.
    if (offset > 0) {
      if (::ftruncate(fd.get(), 0) != 0) {
        return fail(io_error("cannot truncate", join_relative(where, partial), errno));
      }
      hasher = Sha256();
      written = 0;
    }
    return {};
  };
  request.sink = [&](std::string_view chunk) -> Status {
    if (chunk.size() > size - written) {
      return fail(Errc::verify,
                  fmt::format("blob {}: the registry sent more than its {} bytes (the signed size)", digest, size),
                  "E_LIMIT");
    }
    const auto n = ::pwrite(fd.get(), chunk.data(), chunk.size(), static_cast<off_t>(written));
    if (n != static_cast<ssize_t>(chunk.size())) {
      return fail(io_error("cannot write", join_relative(where, partial), n < 0 ? errno : ENOSPC));
    }
    hasher.update(chunk);
    written += chunk.size();
    return {};
  };
  auto response = client.send(request);
  if (!response && response.error().category() == Errc::verify) {
    ::unlinkat(dirfd, partial.c_str(), 0); // oversized: nothing of it is worth resuming
  }
  PW_TRY(response);
  if (response->status == 416) {
    ::unlinkat(dirfd, partial.c_str(), 0); // our partial file does not fit the blob: start again
    return fail(Errc::failed, fmt::format("blob {}: range not satisfiable", digest), std::string(k_unavailable));
  }
  PW_TRY(expect_status(*response, {200, 206}, fmt::format("blob {}", digest)));
  if (written != size) {
    // The answer ended early without a transport error: resume on the next try.
    return fail(Errc::failed, fmt::format("blob {}: {} of {} bytes received", digest, written, size),
                std::string(k_unavailable));
  }
  if (const auto got = "sha256:" + hasher.finish_hex(); got != digest) {
    ::unlinkat(dirfd, partial.c_str(), 0);
    return fail(Errc::verify, fmt::format("blob {}: the registry sent content with digest {}", digest, got),
                "E_BLOB_DIGEST");
  }
  if (::fsync(fd.get()) != 0) {
    return fail(io_error("cannot fsync", join_relative(where, partial), errno));
  }
  return true;
}

} // namespace

Result<std::string>
fetch_pinned_manifest(RegistryClient& client, const ImageReference& pinned)
{
  const auto what = fmt::format("manifest {}", pinned.to_string());
  HttpRequest request;
  request.path = fmt::format("/v2/{}/manifests/{}", pinned.repository, pinned.digest);
  request.headers.push_back(manifest_accept_header());
  request.max_body_bytes = k_max_oci_document_bytes;
  return client.with_retries<std::string>(what, [&]() -> Result<std::string> {
    PW_ASSIGN_CTX(auto response, what, client.send(request));
    PW_TRY(expect_status(response, {200}, what));
    if (const auto got = "sha256:" + sha256_hex(response.body); got != pinned.digest) {
      return fail(Errc::verify, fmt::format("{}: the registry sent a document with digest {}", what, got),
                  "E_OCI_DIGEST");
    }
    return std::move(response.body);
  });
}

Result<std::string>
fetch_small_blob(RegistryClient& client, const std::string& repository, const Descriptor& descriptor,
                 std::uint64_t max_bytes)
{
  const auto what = fmt::format("blob {} ({})", descriptor.digest, descriptor.media_type);
  if (descriptor.size > max_bytes) {
    return fail(Errc::verify, fmt::format("{}: {} bytes, more than the {} allowed", what, descriptor.size, max_bytes),
                "E_LIMIT");
  }
  HttpRequest request;
  request.path = fmt::format("/v2/{}/blobs/{}", repository, descriptor.digest);
  request.max_body_bytes = descriptor.size;
  request.transfer_bytes = descriptor.size;
  return client.with_retries<std::string>(what, [&]() -> Result<std::string> {
    PW_ASSIGN_CTX(auto response, what, client.send(request));
    PW_TRY(expect_status(response, {200}, what));
    if (response.body.size() != descriptor.size) {
      return fail(Errc::verify, fmt::format("{}: {} bytes received, {} expected", what, response.body.size(),
                                            descriptor.size),
                  "E_BLOB_SIZE");
    }
    if (const auto got = "sha256:" + sha256_hex(response.body); got != descriptor.digest) {
      return fail(Errc::verify, fmt::format("{}: the registry sent content with digest {}", what, got),
                  "E_BLOB_DIGEST");
    }
    return std::move(response.body);
  });
}

Status
remove_leftover(int dirfd, const std::string& name, std::string_view where)
{
  if (::unlinkat(dirfd, name.c_str(), 0) == 0 || errno == ENOENT) {
    return {};
  }
  if (errno != EISDIR && errno != EPERM) {
    return fail(tree_io_error("cannot remove", join_relative(where, name), errno));
  }
  // A directory: emptied through fds (never following a link in it), then
  // removed. Not for_each_entry: it visits a directory before its contents,
  // and a directory is removed after them.
  PW_ASSIGN(const auto dir, open_directory_beneath(dirfd, name));
  const auto relative = join_relative(where, name);
  PW_ASSIGN(const auto names, list_directory(dir.get(), relative));
  for (const auto& child : names) {
    PW_TRY(remove_leftover(dir.get(), child, relative));
  }
  if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return fail(tree_io_error("cannot remove", relative, errno));
  }
  return {};
}

Status
download_blob(RegistryClient& client, const std::string& repository, const std::string& digest, std::uint64_t size,
              int dirfd, const std::string& name, std::string_view where)
{
  if (UniqueFd existing(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
      existing) {
    struct stat st{};
    if (::fstat(existing.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
        static_cast<std::uint64_t>(st.st_size) == size) {
      if (auto have = sha256_hex_of_fd(existing.get(), size); have && "sha256:" + *have == digest) {
        log::verbose("blob {} already downloaded", digest);
        return {};
      }
    }
  }
  PW_TRY(remove_leftover(dirfd, name, where));
  const auto partial = name + ".partial";
  const auto path = fmt::format("/v2/{}/blobs/{}", repository, digest);
  PW_TRY(client.with_retries<bool>(fmt::format("blob {}", digest), [&] {
    return download_once(client, path, digest, size, dirfd, partial, where);
  }));
  if (::renameat(dirfd, partial.c_str(), dirfd, name.c_str()) != 0) {
    return fail(io_error("cannot rename", join_relative(where, partial), errno));
  }
  return {};
}

Result<std::vector<Descriptor>>
find_referrers(RegistryClient& client, const ImageReference& subject, std::string_view artifact_type)
{
  const auto what = fmt::format("referrers of {}", subject.to_string());
  PW_ASSIGN(const auto escaped, url_escaped(artifact_type));
  HttpRequest api;
  api.path = fmt::format("/v2/{}/referrers/{}?artifactType={}", subject.repository, subject.digest, escaped);
  api.headers.push_back(fmt::format("Accept: {}", k_image_index_type));
  api.max_body_bytes = k_max_referrers_index_bytes;
  HttpRequest fallback = api;
  fallback.path = fmt::format("/v2/{}/manifests/{}", subject.repository, referrers_tag(subject.digest));

  PW_ASSIGN(const auto body, client.with_retries<std::string>(what, [&]() -> Result<std::string> {
    PW_ASSIGN_CTX(auto response, what, client.send(api));
    if (response.status == 200) {
      return std::move(response.body);
    }
    // The spec: a registry without the API answers 404; then the tag schema.
    PW_TRY(expect_status(response, {404}, what));
    log::verbose("{}: no referrers API (HTTP 404); reading the tag {}", what, referrers_tag(subject.digest));
    PW_ASSIGN_CTX(response, what, client.send(fallback));
    if (response.status == 404) {
      return std::string();
    }
    PW_TRY(expect_status(response, {200}, fmt::format("{} (tag {})", what, referrers_tag(subject.digest))));
    return std::move(response.body);
  }));
  std::vector<Descriptor> found;
  if (body.empty()) {
    return found;
  }
  PW_ASSIGN_CTX(const auto index, what, parse_oci_index(body));
  for (const auto& d : index.manifests) {
    // An entry without artifactType is a candidate too: copies made with
    // skopeo 1.9 (containers/image before image-spec 1.1) drop the field
    // from the index. The caller reads each candidate's own artifactType.
    if ((d.artifact_type == artifact_type || d.artifact_type.empty()) && d.media_type == k_image_manifest_type) {
      found.push_back(d);
    }
  }
  return found;
}

} // namespace prewarm::registry
