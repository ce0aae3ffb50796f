// SPDX-License-Identifier: Apache-2.0
// Reading a bundle directory's small files (manifest + signature envelope)
// with size caps, and opening its slice payloads; shared by the runtime
// installer and the builder's inspect/merge. Nothing here parses or trusts
// the bytes: verify (signature.hpp) before parse (bundle_manifest.hpp).
#pragma once

#include "base/error.hpp"
#include "base/files.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace prewarm::bundle {

inline constexpr std::uint64_t k_max_manifest_bytes = std::uint64_t{16} << 20;

struct LoadedBundle
{
  std::filesystem::path dir;
  std::string manifest_bytes; // unverified
  std::string envelope_bytes; // unverified
};

// Reads DIR/manifest (<= 16 MiB) and DIR/manifest.sig (<= 64 KiB), each
// opened without following a final symlink and required to be a regular file.
// Too large: Errc::verify E_LIMIT. Missing / unreadable: Errc::failed E_IO
// naming the path ("is this a prewarm bundle?").
Result<LoadedBundle> load_bundle_files(const std::filesystem::path& dir);

// DIR/slices/<id>.tar.zst
std::filesystem::path slice_payload_path(const std::filesystem::path& dir, std::string_view slice_id);

// Opens a slice payload read-only (O_NOFOLLOW, regular file) for
// verify_payload()/extract_slice(). Errc::failed E_IO when absent.
Result<UniqueFd> open_slice_payload(const std::filesystem::path& dir, std::string_view slice_id);

// True when `dir` looks like a bundle (holds a regular `manifest` file whose
// first line is "prewarm-bundle 1"); used before replacing a directory.
bool is_bundle_directory(const std::filesystem::path& dir);

} // namespace prewarm::bundle
