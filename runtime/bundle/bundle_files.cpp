// SPDX-License-Identifier: Apache-2.0
#include "bundle/bundle_files.hpp"

#include "base/encoding.hpp"
#include "bundle/bundle_manifest.hpp"
#include "bundle/signature.hpp"

#include <fmt/format.h>

#include <unistd.h>

namespace prewarm::bundle {

namespace {

Result<std::string>
read_capped(const std::filesystem::path& path, std::uint64_t cap)
{
  auto bytes = read_file(path.string(), cap);
  if (!bytes) {
    if (bytes.error().code() == "E_LIMIT" || bytes.error().code() == "E_NOT_REGULAR") {
      return fail(bytes.error());
    }
    return fail(Errc::failed,
                fmt::format("{} (is {} a prewarm bundle?)", bytes.error().message(), in_quotes(path.parent_path().string())),
                "E_IO");
  }
  return bytes;
}

} // namespace

Result<LoadedBundle>
load_bundle_files(const std::filesystem::path& dir)
{
  LoadedBundle loaded;
  loaded.dir = dir;
  PW_ASSIGN(loaded.manifest_bytes, read_capped(dir / k_manifest_file, k_max_manifest_bytes));
  PW_ASSIGN(loaded.envelope_bytes, read_capped(dir / k_signature_file, k_max_envelope_bytes));
  return loaded;
}

std::filesystem::path
slice_payload_path(const std::filesystem::path& dir, std::string_view slice_id)
{
  return dir / k_slices_dir / (std::string(slice_id) + std::string(k_slice_suffix));
}

Result<UniqueFd>
open_slice_payload(const std::filesystem::path& dir, std::string_view slice_id)
{
  const auto path = slice_payload_path(dir, slice_id);
  auto fd = open_regular_file(path.string());
  if (!fd) {
    if (fd.error().code() == "E_NOT_REGULAR") {
      return fail(fd.error());
    }
    return fail(Errc::failed, fmt::format("slice {}: {}", in_quotes(slice_id), fd.error().message()), "E_IO");
  }
  return fd;
}

bool
is_bundle_directory(const std::filesystem::path& dir)
{
  auto fd = open_regular_file((dir / k_manifest_file).string());
  if (!fd) {
    return false;
  }
  constexpr std::string_view magic = "prewarm-bundle 1\n";
  char buffer[magic.size()];
  const ssize_t got = ::pread(fd->get(), buffer, sizeof buffer, 0);
  return got == static_cast<ssize_t>(magic.size()) && std::string_view(buffer, magic.size()) == magic;
}

} // namespace prewarm::bundle
