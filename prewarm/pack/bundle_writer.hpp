// SPDX-License-Identifier: Apache-2.0
// Writes a signed bundle directory:
//   OUT/manifest             bundle/bundle_manifest.hpp serialize()
//   OUT/manifest.sig         signed with every given key
//   OUT/slices/<id>.tar.zst  one per slice (slice_writer.hpp)
// Everything is written into "OUT.tmp-XXXXXX" beside OUT and renamed into
// place at the end; on any error the temporary directory is removed, so a
// partial bundle never exists under OUT. An existing OUT is replaced only if
// it is a prewarm bundle (bundle/bundle_files.hpp is_bundle_directory()).
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/bundle_manifest.hpp"
#include "pack/key_pair.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace prewarm::pack {

struct SliceInput
{
  std::string id;                              // bundle/bundle_manifest.hpp ID
  std::filesystem::path staging_dir;           // <kind>/<relative paths>
  std::vector<bundle::Requirement> requirements;
  std::vector<std::string> jobs;               // what filled it, e.g. "llama3-8b fp16 bs=1"
  std::vector<bundle::CustomCache> caches = {};     // custom caches under staging_dir/custom/
  std::vector<bundle::EnvSetting> environment = {}; // runtime env of the models that filled it
  std::vector<std::string> site_packages = {};      // the application's Python packages (bundle_manifest.hpp)
};

struct BundleSpec
{
  std::string channel = "default";
  std::uint64_t serial = 1;
  SysSeconds issued_at{};
  SysSeconds expires{};
  std::string build_manifest_sha256;   // digest of the YAML build manifest
  std::string producer_extra;          // appended to the producer line (may be empty)
  // Entry mtimes; defaults to issued_at. Builders pass SOURCE_DATE_EPOCH here.
  std::optional<SysSeconds> archive_mtime;
  std::vector<SliceInput> slices;
};

struct WrittenBundle
{
  std::filesystem::path dir;
  bundle::BundleManifest manifest;
  std::string manifest_sha256; // of OUT/manifest
};

// "prewarm/<version> libarchive/<v> zstd/<v> level=3 threads=1[ <extra>]"
std::string producer_string(const BundleSpec& spec);

// Validates the spec (ids, requirements, dates, channel), archives every
// slice, builds + normalizes + validates the manifest, signs it with every
// key in `keys` (at least one) and publishes OUT atomically.
Result<WrittenBundle> write_bundle(const BundleSpec& spec,
                                   std::span<const PrivateKey> keys,
                                   const std::filesystem::path& out_dir);

} // namespace prewarm::pack
