// SPDX-License-Identifier: Apache-2.0
#include "pack/slice_writer.hpp"

#include "base/digest.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "bundle/cache_kind.hpp"
#include "bundle/slice_reader.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <vector>

namespace prewarm::pack {

namespace {

constexpr std::size_t k_copy_buffer = 256 * 1024;

struct StagedEntry
{
  std::string path; // "<kind>/<rel>", '/'-separated
  bool is_dir = false;
  std::uint64_t size = 0;
  bool executable = false;
};

std::unexpected<Error>
refuse(const std::filesystem::path& where, std::string_view why)
{
  return fail(Errc::usage, fmt::format("cannot pack {}: {}", in_quotes(where.string()), why));
}

// Walks `root` without following symlinks and refuses anything a slice may
// not carry, naming the offending path (fail at build, never at install).
Result<std::vector<StagedEntry>>
collect_entries(const std::filesystem::path& root)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto root_status = fs::symlink_status(root, ec);
  if (ec || root_status.type() != fs::file_type::directory) {
    return refuse(root, "not a directory");
  }
  const bundle::ExtractLimits reader_limits; // what every runtime accepts by default
  std::vector<StagedEntry> entries;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec);
  if (ec) {
    return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(root.string()), ec.message()));
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(root.string()), ec.message()));
    }
    const fs::path& full = it->path();
    const std::string rel = full.lexically_relative(root).generic_string();
    struct stat st{};
    if (::lstat(full.c_str(), &st) != 0) {
      return fail(Errc::failed, fmt::format("cannot stat {}: {}", in_quotes(full.string()), errno_message(errno)));
    }
    StagedEntry entry{rel, false, 0, false};
    if (S_ISLNK(st.st_mode)) {
      return refuse(full, "is a symbolic link (a slice carries regular files and directories only; copy the target in instead)");
    }
    if (S_ISDIR(st.st_mode)) {
      entry.is_dir = true;
    } else if (S_ISREG(st.st_mode)) {
      entry.size = static_cast<std::uint64_t>(st.st_size);
      entry.executable = (st.st_mode & S_IXUSR) != 0;
      if (entry.size > reader_limits.max_file_bytes) {
        return refuse(full, fmt::format("{} bytes is over the per-file limit of {} that installers apply", entry.size, reader_limits.max_file_bytes));
      }
    } else {
      return refuse(full, "is a socket, fifo or device (a slice carries regular files and directories only)");
    }
    if (auto s = bundle::validate_entry_path(rel, entry.is_dir ? bundle::KindOnlyPath::allowed : bundle::KindOnlyPath::refused); !s) {
      return refuse(full, s.error().message() + " (top-level directories must be cache kinds: programs, pocl, cuda, neo, sycl, triton, inductor)");
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) {
    return refuse(root, "the staging directory is empty");
  }
  std::sort(entries.begin(), entries.end(), [](const StagedEntry& a, const StagedEntry& b) { return a.path < b.path; });
  return entries;
}

using WriterPtr = std::unique_ptr<archive, decltype(&archive_write_free)>;
using EntryPtr = std::unique_ptr<archive_entry, decltype(&archive_entry_free)>;

std::string
archive_message(archive* a)
{
  const char* text = archive_error_string(a);
  return text != nullptr ? text : "no detail from libarchive";
}

} // namespace

std::string
archive_toolchain_description(const SliceWriteOptions& options)
{
  const char* zstd = archive_libzstd_version();
  return fmt::format("libarchive/{} zstd/{} level={} threads={}", ARCHIVE_VERSION_ONLY_STRING,
                     zstd != nullptr ? zstd : "unknown", options.zstd_level, options.zstd_threads);
}

Result<WrittenSlice>
write_slice(const std::filesystem::path& staging_dir,
            const std::filesystem::path& output_file,
            const SliceWriteOptions& options)
{
  PW_ASSIGN(const auto entries, collect_entries(staging_dir));

  UniqueFd out(::open(output_file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!out) {
    return fail(Errc::failed, fmt::format("cannot create {}: {}", in_quotes(output_file.string()), errno_message(errno)));
  }
  WriterPtr a(archive_write_new(), &archive_write_free);
  // pax_restricted: ustar headers, a pax 'x' header only when a value does
  // not fit, never atime/ctime; zstd at a fixed level and worker count.
  if (!a || archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK ||
      archive_write_add_filter_zstd(a.get()) != ARCHIVE_OK ||
      archive_write_set_filter_option(a.get(), "zstd", "compression-level", std::to_string(options.zstd_level).c_str()) != ARCHIVE_OK ||
      archive_write_set_filter_option(a.get(), "zstd", "threads", std::to_string(options.zstd_threads).c_str()) != ARCHIVE_OK ||
      archive_write_open_fd(a.get(), out.get()) != ARCHIVE_OK) {
    return fail(Errc::failed, fmt::format("cannot start {}: {}", in_quotes(output_file.string()), archive_message(a.get())));
  }

  WrittenSlice written;
  const auto mtime = static_cast<time_t>(options.mtime.time_since_epoch().count());
  std::vector<char> buffer(k_copy_buffer);
  for (const auto& staged : entries) {
    EntryPtr entry(archive_entry_new(), &archive_entry_free);
    archive_entry_set_pathname(entry.get(), staged.path.c_str());
    archive_entry_set_filetype(entry.get(), staged.is_dir ? AE_IFDIR : AE_IFREG);
    const unsigned mode = staged.is_dir || staged.executable ? 0755 : 0644;
    archive_entry_set_perm(entry.get(), mode);
    archive_entry_set_size(entry.get(), staged.is_dir ? 0 : static_cast<la_int64_t>(staged.size));
    archive_entry_set_mtime(entry.get(), mtime, 0);
    archive_entry_set_uid(entry.get(), 0);
    archive_entry_set_gid(entry.get(), 0);
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK) {
      return fail(Errc::failed, fmt::format("cannot add {}: {}", in_quotes(staged.path), archive_message(a.get())));
    }
    if (staged.is_dir) {
      written.directories.push_back(staged.path);
      continue;
    }
    const auto source = staging_dir / staged.path;
    PW_ASSIGN(UniqueFd in, open_regular_file(source.string()));
    Sha256 digest;
    std::uint64_t copied = 0;
    while (true) {
      const ssize_t got = ::read(in.get(), buffer.data(), buffer.size());
      if (got < 0) {
        if (errno == EINTR) {
          continue;
        }
        return fail(Errc::failed, fmt::format("cannot read {}: {}", in_quotes(source.string()), errno_message(errno)));
      }
      if (got == 0) {
        break;
      }
      copied += static_cast<std::uint64_t>(got);
      if (copied > staged.size) {
        break;
      }
      digest.update(buffer.data(), static_cast<std::size_t>(got));
      if (archive_write_data(a.get(), buffer.data(), static_cast<std::size_t>(got)) != got) {
        return fail(Errc::failed, fmt::format("cannot archive {}: {}", in_quotes(source.string()), archive_message(a.get())));
      }
    }
    if (copied != staged.size) {
      return fail(Errc::failed, fmt::format("{} changed size while being packed ({} then {} bytes); is something still writing the cache?",
                                            in_quotes(source.string()), staged.size, copied));
    }
    written.files.push_back(bundle::FileEntry{staged.path, digest.finish_hex(), staged.size, mode});
    written.uncompressed_size += staged.size;
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return fail(Errc::failed, fmt::format("cannot finish {}: {}", in_quotes(output_file.string()), archive_message(a.get())));
  }
  if (::fsync(out.get()) != 0) {
    return fail(Errc::failed, fmt::format("cannot sync {}: {}", in_quotes(output_file.string()), errno_message(errno)));
  }
  PW_ASSIGN(written.payload_size, file_size(out.get()));
  PW_ASSIGN(written.payload_sha256, sha256_hex_of_fd(out.get(), written.payload_size));
  return written;
}

} // namespace prewarm::pack
