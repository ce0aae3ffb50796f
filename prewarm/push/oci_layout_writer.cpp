// SPDX-License-Identifier: Apache-2.0
#include "push/oci_layout_writer.hpp"

#include "base/files.hpp"
#include "base/time_format.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <array>
#include <fstream>
#include <map>
#include <memory>

namespace prewarm::push {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_layout_file = R"({"imageLayoutVersion":"1.0.0"})";

// What goes in the layout, by name: small files inline, blobs from disk.
struct LayoutEntry
{
  std::string bytes;
  fs::path file;
  std::uint64_t size = 0;
};

std::map<std::string, LayoutEntry>
layout_entries(const BundleArtifact& artifact, const std::string& ref_name)
{
  std::map<std::string, LayoutEntry> entries;
  const auto blob_name = [](const std::string& digest) { return "blobs/sha256/" + digest.substr(7); };
  for (const auto& blob : artifact.blobs) {
    entries[blob_name(blob.descriptor.digest)] = {blob.bytes, blob.file, blob.descriptor.size};
  }
  entries[blob_name(artifact.manifest_descriptor.digest)] = {artifact.manifest, {}, artifact.manifest.size()};
  entries["oci-layout"] = {std::string(k_layout_file), {}, k_layout_file.size()};
  const auto index = fmt::format(R"({{"schemaVersion":2,"mediaType":"{}","manifests":[{}]}})",
                                 registry::k_image_index_type, descriptor_json(artifact, ref_name));
  entries["index.json"] = {index, {}, index.size()};
  return entries;
}

Status
copy_blob_file(const fs::path& from, const fs::path& to)
{
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot copy {} to {}: {}", from.string(), to.string(), ec.message()), "E_IO");
  }
  return {};
}

Status
write_directory(const std::map<std::string, LayoutEntry>& entries, const fs::path& dir)
{
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    return fail(Errc::usage, fmt::format("oci:{}: the directory exists and is not empty", dir.string()));
  }
  fs::create_directories(dir / "blobs" / "sha256", ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", dir.string(), ec.message()), "E_IO");
  }
  for (const auto& [name, entry] : entries) {
    if (!entry.file.empty()) {
      PW_TRY(copy_blob_file(entry.file, dir / name));
    } else {
      PW_TRY(write_file_atomic(dir / name, entry.bytes, 0644, Durability::none));
    }
  }
  return {};
}

Status
archive_error(archive* a, const fs::path& file)
{
  return fail(Errc::failed, fmt::format("cannot write {}: {}", file.string(), archive_error_string(a)), "E_IO");
}

Status
write_archive(const std::map<std::string, LayoutEntry>& entries, const fs::path& file, SysSeconds mtime)
{
  const auto temporary = fs::path(file.string() + ".tmp");
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(), archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  if (archive_write_open_filename(a.get(), temporary.c_str()) != ARCHIVE_OK) {
    return archive_error(a.get(), temporary);
  }
  const auto add_directory = [&](const char* name) -> Status {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), name);
    archive_entry_set_filetype(e.get(), AE_IFDIR);
    archive_entry_set_perm(e.get(), 0755);
    archive_entry_set_mtime(e.get(), mtime.time_since_epoch().count(), 0);
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) {
      return archive_error(a.get(), temporary);
    }
    return {};
  };
  PW_TRY(add_directory("blobs"));
  PW_TRY(add_directory("blobs/sha256"));
  for (const auto& [name, entry] : entries) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(entry.size));
    archive_entry_set_mtime(e.get(), mtime.time_since_epoch().count(), 0);
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) {
      return archive_error(a.get(), temporary);
    }
    if (entry.file.empty()) {
      if (archive_write_data(a.get(), entry.bytes.data(), entry.bytes.size()) < 0) {
        return archive_error(a.get(), temporary);
      }
      continue;
    }
    std::ifstream in(entry.file, std::ios::binary);
    std::array<char, 1 << 16> buffer{};
    while (in) {
      in.read(buffer.data(), buffer.size());
      if (in.gcount() > 0 && archive_write_data(a.get(), buffer.data(), static_cast<std::size_t>(in.gcount())) < 0) {
        return archive_error(a.get(), temporary);
      }
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return archive_error(a.get(), temporary);
  }
  std::error_code ec;
  fs::rename(temporary, file, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot rename {}: {}", temporary.string(), ec.message()), "E_IO");
  }
  return {};
}

} // namespace

std::optional<LayoutDestination>
parse_layout_destination(std::string_view text)
{
  LayoutDestination destination;
  if (text.starts_with("oci-archive:")) {
    destination.form = LayoutForm::archive;
    text.remove_prefix(12);
  } else if (text.starts_with("oci:")) {
    destination.form = LayoutForm::directory;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  // As skopeo: the part after the last ':' is the reference name.
  if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    destination.ref_name = std::string(text.substr(colon + 1));
    text = text.substr(0, colon);
  }
  destination.path = std::string(text);
  return destination;
}

Status
write_oci_layout(const BundleArtifact& artifact, const LayoutDestination& destination)
{
  if (destination.path.empty()) {
    return fail(Errc::usage, "OCI layout destination: no path (oci:DIR[:REF] or oci-archive:FILE[:REF])");
  }
  const auto entries = layout_entries(artifact, destination.ref_name);
  if (destination.form == LayoutForm::directory) {
    return write_directory(entries, destination.path);
  }
  PW_ASSIGN(const auto mtime, parse_rfc3339(artifact.created));
  return write_archive(entries, destination.path, mtime);
}

} // namespace prewarm::push
