// SPDX-License-Identifier: Apache-2.0
#include "pack/slice_writer.hpp"

#include "base/digest.hpp"
#include "base/directory_tree.hpp"
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
#include <climits>
#include <memory>
#include <vector>

namespace prewarm::pack {

namespace {

constexpr std::size_t k_copy_buffer = 256 * 1024;

Result<std::string>
read_link_at(int dirfd, const std::string& name, const std::filesystem::path& full)
{
  std::string target(PATH_MAX, '\0');
  const ssize_t got = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
  if (got < 0) {
    return fail(Errc::failed, fmt::format("cannot read the link {}: {}", in_quotes(full.string()), errno_message(errno)));
  }
  if (static_cast<std::size_t>(got) >= target.size()) {
    return fail(Errc::usage, fmt::format("cannot pack {}: link target longer than {} bytes", in_quotes(full.string()), PATH_MAX));
  }
  target.resize(static_cast<std::size_t>(got));
  return target;
}

struct StagedEntry
{
  std::string path; // "<kind>/<rel>", '/'-separated, the name on disk
  enum class Type { directory, file, link } type = Type::file;
  std::uint64_t size = 0;
  bool executable = false;
  std::string target; // a link's target, as the link holds it
};

std::unexpected<Error>
refuse(const std::filesystem::path& where, std::string_view why)
{
  return fail(Errc::usage, fmt::format("cannot pack {}: {}", in_quotes(where.string()), why));
}

constexpr std::size_t k_max_walk_depth = bundle::k_max_path_depth + 2;

// Visits every entry beneath the staging root (base's walk: directory fds,
// never following a link) and refuses anything a slice may not carry, naming
// the offending path (fail at build, never at install).
Status
collect_beneath(const std::filesystem::path& root, std::vector<StagedEntry>& entries)
{
  const bundle::ExtractLimits reader_limits; // what every runtime accepts by default
  return for_each_entry(root, [&](const TreeEntry& found) -> Result<WalkNext> {
    const std::string path(found.relative);
    const auto full = root / path;
    const auto& st = found.stat;
    StagedEntry entry;
    entry.path = path;
    if (S_ISDIR(st.st_mode)) {
      entry.type = StagedEntry::Type::directory;
    } else if (S_ISREG(st.st_mode)) {
      entry.size = static_cast<std::uint64_t>(st.st_size);
      entry.executable = (st.st_mode & S_IXUSR) != 0;
      if (entry.size > reader_limits.max_file_bytes) {
        return refuse(full, fmt::format("{} bytes is over the per-file limit of {} that installers apply", entry.size, reader_limits.max_file_bytes));
      }
    } else if (S_ISLNK(st.st_mode)) {
      entry.type = StagedEntry::Type::link;
      PW_ASSIGN(entry.target, read_link_at(found.parent_fd, std::string(found.name), full));
      if (auto resolved = bundle::resolve_link_target(path, entry.target); !resolved) {
        return refuse(full, "is a symbolic link no slice can carry: " + resolved.error().message());
      }
    } else {
      return refuse(full, "is a socket, fifo or device (a slice carries files, directories and links inside the cache only)");
    }
    const auto kind_only = entry.type == StagedEntry::Type::directory ? bundle::KindOnlyPath::allowed : bundle::KindOnlyPath::refused;
    if (auto s = bundle::validate_entry_path(path, kind_only); !s) {
      return refuse(full, s.error().message() + " (top-level directories must be cache kinds: programs, pocl, cuda, neo, sycl, triton, inductor, custom)");
    }
    const bool directory = entry.type == StagedEntry::Type::directory;
    entries.push_back(std::move(entry));
    // The walk has no depth limit of its own: a directory deeper than any
    // slice may hold is refused before the walk descends into it.
    if (directory && static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')) + 1 > k_max_walk_depth) {
      return refuse(full, fmt::format("more than {} directories deep", k_max_walk_depth));
    }
    return WalkNext::descend;
  });
}

// Every link must lead to a regular file of the staging tree, inside its own
// cache: the same rule the manifest's validate() applies, told here with the
// file named (a link to a directory, another link or nothing never ships).
Status
check_link_targets(const std::filesystem::path& root, const std::vector<StagedEntry>& entries)
{
  for (const auto& entry : entries) {
    if (entry.type != StagedEntry::Type::link) {
      continue;
    }
    PW_ASSIGN(const auto resolved, bundle::resolve_link_target(entry.path, entry.target));
    const auto it = std::lower_bound(entries.begin(), entries.end(), resolved,
                                     [](const StagedEntry& e, const std::string& p) { return e.path < p; });
    if (it == entries.end() || it->path != resolved || it->type != StagedEntry::Type::file) {
      const std::string_view what = it == entries.end() || it->path != resolved ? "nothing"
                                    : it->type == StagedEntry::Type::directory ? "a directory"
                                                                                : "another link";
      return refuse(root / entry.path, fmt::format("is a symbolic link to {}, which is {} (a slice carries links to files of "
                                                   "the same cache only)", in_quotes(entry.target), what));
    }
  }
  return {};
}

Result<std::vector<StagedEntry>>
collect_entries(const std::filesystem::path& root)
{
  UniqueFd top(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top) {
    return refuse(root, fmt::format("not a directory ({})", errno_message(errno)));
  }
  std::vector<StagedEntry> entries;
  PW_TRY(collect_beneath(root, entries));
  if (entries.empty()) {
    return refuse(root, "the staging directory is empty");
  }
  std::sort(entries.begin(), entries.end(), [](const StagedEntry& a, const StagedEntry& b) { return a.path < b.path; });
  PW_TRY(check_link_targets(root, entries));
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
    const bool is_dir = staged.type == StagedEntry::Type::directory;
    const bool is_link = staged.type == StagedEntry::Type::link;
    EntryPtr entry(archive_entry_new(), &archive_entry_free);
    // The manifest's spelling (encode_entry_path): tar names stay ASCII, so
    // no locale's charset conversion can change a name between writer and
    // reader, and each name has one spelling in the stream.
    archive_entry_set_pathname(entry.get(), bundle::encode_entry_path(staged.path).c_str());
    archive_entry_set_filetype(entry.get(), is_dir ? AE_IFDIR : is_link ? AE_IFLNK : AE_IFREG);
    const unsigned mode = is_link ? 0777 : is_dir || staged.executable ? 0755 : 0644;
    archive_entry_set_perm(entry.get(), mode);
    archive_entry_set_size(entry.get(), is_dir || is_link ? 0 : static_cast<la_int64_t>(staged.size));
    if (is_link) {
      archive_entry_set_symlink(entry.get(), bundle::encode_entry_path(staged.target).c_str());
    }
    archive_entry_set_mtime(entry.get(), mtime, 0);
    archive_entry_set_uid(entry.get(), 0);
    archive_entry_set_gid(entry.get(), 0);
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK) {
      return fail(Errc::failed, fmt::format("cannot add {}: {}", in_quotes(staged.path), archive_message(a.get())));
    }
    if (is_dir) {
      written.directories.push_back(staged.path);
      continue;
    }
    if (is_link) {
      written.links.push_back(bundle::LinkEntry{staged.path, staged.target});
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
