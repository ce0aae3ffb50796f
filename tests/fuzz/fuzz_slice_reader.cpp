// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the bundle reader (slice_reader.hpp) past the digest check.
// Input: an uncompressed tar stream. The harness zstd-compresses it and
// computes the payload digest (the "digest check disabled" build of
// signing-archives.md §7.63), then extracts it against a fixed slice
// (pocl, pocl/aa, pocl/aa/k.bin = "kernel") into a fresh staging dir.
// Invariants: no crash/UB; nothing appears beside the staging directory;
// a successful extraction produced exactly the listed tree.
#include "base/digest.hpp"
#include "base/files.hpp"
#include "bundle/slice_reader.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace {

std::string
zstd(std::string_view bytes)
{
  std::string out(bytes.size() + 65536, '\0');
  std::size_t used = 0;
  archive* a = archive_write_new();
  archive_write_set_format_raw(a);
  archive_write_add_filter_zstd(a);
  archive_write_set_filter_option(a, "zstd", "compression-level", "1");
  archive_write_set_bytes_in_last_block(a, 1);
  archive_write_open_memory(a, out.data(), out.size(), &used);
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "data");
  archive_entry_set_filetype(e, AE_IFREG);
  archive_write_header(a, e);
  archive_write_data(a, bytes.data(), bytes.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  out.resize(used);
  return out;
}

std::size_t
count_entries(const std::filesystem::path& dir)
{
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    ++n;
  }
  return n;
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size > (1u << 20)) {
    return 0;
  }
  const auto payload = zstd(std::string_view(reinterpret_cast<const char*>(data), size));
  prewarm::bundle::Slice slice;
  slice.id = "fuzz";
  slice.payload_sha256 = prewarm::sha256_hex(payload);
  slice.payload_size = payload.size();
  slice.directories = {"pocl", "pocl/aa"};
  slice.files = {{"pocl/aa/k.bin", prewarm::sha256_hex("kernel"), 6, 0644}};
  slice.uncompressed_size = 6;
  slice.entry_count = 3;

  const int memfd = ::memfd_create("payload", MFD_CLOEXEC);
  if (memfd < 0 || ::write(memfd, payload.data(), payload.size()) != static_cast<ssize_t>(payload.size())) {
    std::abort();
  }
  prewarm::UniqueFd payload_fd(memfd);
  auto scratch = prewarm::TempDir::create("prewarm-fuzz-");
  if (!scratch) {
    std::abort();
  }
  const auto staging = scratch->path() / "staging";
  ::mkdir(staging.c_str(), 0700);
  const int staging_fd = ::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  prewarm::UniqueFd staging_dir(staging_fd);
  prewarm::bundle::ExtractLimits limits;
  limits.max_uncompressed_bytes = 1 << 20;
  limits.max_file_bytes = 1 << 20;
  const auto extracted = prewarm::bundle::extract_slice(payload_fd.get(), slice, staging_dir.get(), limits);
  // Only "staging" may exist in the scratch dir, whatever the archive said.
  if (count_entries(scratch->path()) != 1 + count_entries(staging)) {
    std::abort();
  }
  if (extracted && count_entries(staging) != 3) {
    std::abort();
  }
  return 0;
}
