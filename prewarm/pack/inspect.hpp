// SPDX-License-Identifier: Apache-2.0
// A human and a machine description of a bundle: header, slices with their
// requirements and jobs, and per slice the kinds with file counts and sizes.
// The signature is checked only when a trust store is given; otherwise the
// description says "signature not checked" (the manifest is still parsed
// strictly).
#pragma once

#include "base/error.hpp"
#include "base/time_format.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/trust.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::pack {

enum class SignatureCheck { not_checked, verified };

struct KindSummary
{
  std::string kind;
  std::uint64_t file_count = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t link_count = 0; // symbolic links inside the cache
};

struct BundleDescription
{
  std::filesystem::path dir;
  std::string manifest_sha256;
  bundle::BundleManifest manifest;
  SignatureCheck signature = SignatureCheck::not_checked;
  std::vector<std::string> signer_key_ids; // when verified
  std::vector<std::string> envelope_key_ids; // as listed in manifest.sig (hints)
  // Parallel to manifest.slices.
  std::vector<std::vector<KindSummary>> slice_kinds;
};

// Reads and describes DIR. With `trust`, a signature failure is the error.
Result<BundleDescription> inspect_bundle(const std::filesystem::path& dir,
                                         const std::optional<bundle::TrustStore>& trust,
                                         SysSeconds now);

std::string format_text(const BundleDescription& description);
std::string format_json(const BundleDescription& description); // one JSON object, pretty
} // namespace prewarm::pack
