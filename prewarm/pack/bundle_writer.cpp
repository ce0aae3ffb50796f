// SPDX-License-Identifier: Apache-2.0
#include "pack/bundle_writer.hpp"

#include "base/digest.hpp"
#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/requirement.hpp"
#include "bundle/slice_reader.hpp"
#include "pack/manifest_signer.hpp"
#include "pack/slice_writer.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <stdio.h> // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#ifndef PREWARM_VERSION
#define PREWARM_VERSION "0.0.0"
#endif

namespace prewarm::pack {

namespace {

// Removes the temporary bundle directory unless the write succeeded.
class TemporaryTree
{
public:
  explicit TemporaryTree(std::filesystem::path path) : m_path(std::move(path)) {}
  TemporaryTree(const TemporaryTree&) = delete;
  TemporaryTree& operator=(const TemporaryTree&) = delete;
  ~TemporaryTree()
  {
    if (!m_path.empty()) {
      (void)remove_tree(m_path);
    }
  }
  const std::filesystem::path& path() const { return m_path; }
  void keep() { m_path.clear(); }

private:
  std::filesystem::path m_path;
};

Status
check_spec(const BundleSpec& spec, std::span<const PrivateKey> keys)
{
  if (keys.empty()) {
    return fail(Errc::usage, "a bundle needs at least one signing key");
  }
  if (spec.slices.empty()) {
    return fail(Errc::usage, "a bundle needs at least one slice");
  }
  if (spec.expires <= spec.issued_at) {
    return fail(Errc::usage, fmt::format("bundle expires {} is not after issued-at {}", format_rfc3339(spec.expires), format_rfc3339(spec.issued_at)));
  }
  std::set<std::string> ids;
  for (const auto& slice : spec.slices) {
    if (!ids.insert(slice.id).second) {
      return fail(Errc::usage, fmt::format("slice id {} is used twice", in_quotes(slice.id)));
    }
    for (const auto& r : slice.requirements) {
      if (auto s = bundle::validate_requirement(r); !s) {
        return fail(Errc::usage, fmt::format("slice {}: {}", in_quotes(slice.id), s.error().message()));
      }
    }
  }
  return {};
}

// Publishes `tmp` as `out`: a plain rename when `out` is absent; an atomic
// exchange when `out` is an existing bundle (then the old one is removed).
Status
publish(const std::filesystem::path& tmp, const std::filesystem::path& out)
{
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(out, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_NOREPLACE) == 0) {
      return {};
    }
    if (errno != EINVAL && errno != ENOSYS) {
      return fail(Errc::failed, fmt::format("cannot move the bundle to {}: {}", in_quotes(out.string()), errno_message(errno)));
    }
    if (::rename(tmp.c_str(), out.c_str()) != 0) {
      return fail(Errc::failed, fmt::format("cannot move the bundle to {}: {}", in_quotes(out.string()), errno_message(errno)));
    }
    return {};
  }
  if (status.type() != std::filesystem::file_type::directory || !bundle::is_bundle_directory(out)) {
    return fail(Errc::usage, fmt::format("{} exists and is not a prewarm bundle; refusing to replace it", in_quotes(out.string())));
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0) {
    return remove_tree(tmp); // now holds the previous bundle
  }
  if (errno != EINVAL && errno != ENOSYS) {
    return fail(Errc::failed, fmt::format("cannot replace {}: {}", in_quotes(out.string()), errno_message(errno)));
  }
  // A file system without RENAME_EXCHANGE: a short window without OUT.
  const auto old = std::filesystem::path(tmp.string() + ".old");
  if (::rename(out.c_str(), old.c_str()) != 0 || ::rename(tmp.c_str(), out.c_str()) != 0) {
    return fail(Errc::failed, fmt::format("cannot replace {}: {}", in_quotes(out.string()), errno_message(errno)));
  }
  return remove_tree(old);
}

} // namespace

std::string
producer_string(const BundleSpec& spec)
{
  SliceWriteOptions options;
  std::string out = fmt::format("prewarm/{} {}", PREWARM_VERSION, archive_toolchain_description(options));
  if (!spec.producer_extra.empty()) {
    out += " " + spec.producer_extra;
  }
  return out;
}

Result<WrittenBundle>
write_bundle(const BundleSpec& spec, std::span<const PrivateKey> keys, const std::filesystem::path& out_dir)
{
  PW_TRY(check_spec(spec, keys));
  const auto out = out_dir.lexically_normal();
  if (out.filename().empty()) {
    return fail(Errc::usage, fmt::format("bundle path {} must name a directory", in_quotes(out_dir.string())));
  }
  const auto parent = out.has_parent_path() ? out.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(parent.string()), ec.message()));
  }
  PW_ASSIGN(auto tmp_path, make_private_directory(parent, out.filename().string() + ".tmp-"));
  TemporaryTree tmp(tmp_path);
  const auto slices_dir = tmp.path() / bundle::k_slices_dir;
  if (::mkdir(slices_dir.c_str(), 0755) != 0) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(slices_dir.string()), errno_message(errno)));
  }

  bundle::BundleManifest manifest;
  manifest.channel = spec.channel;
  manifest.serial = spec.serial;
  manifest.issued_at = spec.issued_at;
  manifest.expires = spec.expires;
  manifest.producer = producer_string(spec);
  manifest.build_manifest_sha256 = spec.build_manifest_sha256;
  SliceWriteOptions options;
  options.mtime = spec.archive_mtime.value_or(spec.issued_at);
  for (const auto& input : spec.slices) {
    PW_ASSIGN_CTX(auto written, fmt::format("slice {}", in_quotes(input.id)),
                  write_slice(input.staging_dir, bundle::slice_payload_path(tmp.path(), input.id), options));
    bundle::Slice slice;
    slice.id = input.id;
    slice.payload_sha256 = std::move(written.payload_sha256);
    slice.payload_size = written.payload_size;
    slice.uncompressed_size = written.uncompressed_size;
    slice.requirements = input.requirements;
    slice.site_packages = input.site_packages;
    slice.jobs = input.jobs;
    slice.caches = input.caches;
    slice.environment = input.environment;
    slice.directories = std::move(written.directories);
    slice.files = std::move(written.files);
    slice.links = std::move(written.links);
    manifest.slices.push_back(std::move(slice));
  }
  bundle::normalize(manifest);
  if (auto s = bundle::validate(manifest); !s) {
    return fail(Errc::usage, "the bundle would not verify: " + s.error().message());
  }
  const std::string manifest_bytes = bundle::serialize(manifest);
  PW_ASSIGN(const auto envelope, sign_manifest(manifest_bytes, keys));
  PW_TRY(write_file_atomic(tmp.path() / bundle::k_manifest_file, manifest_bytes, 0644, Durability::none));
  PW_TRY(write_file_atomic(tmp.path() / bundle::k_signature_file, envelope, 0644, Durability::none));
  {
    UniqueFd dir(::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir || ::fchmod(dir.get(), 0755) != 0) {
      return fail(Errc::failed, fmt::format("cannot chmod {}: {}", in_quotes(tmp.path().string()), errno_message(errno)));
    }
    PW_TRY(fsync_tree(dir.get()));
  }
  PW_TRY(publish(tmp.path(), out));
  tmp.keep();
  PW_TRY(fsync_directory(parent));
  return WrittenBundle{out, std::move(manifest), sha256_hex(manifest_bytes)};
}

} // namespace prewarm::pack
