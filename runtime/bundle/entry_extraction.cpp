// SPDX-License-Identifier: Apache-2.0
#include "bundle/entry_extraction.hpp"

#include "base/digest.hpp"
#include "base/directory_tree.hpp"
#include "base/encoding.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "bundle/reader_errors.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace prewarm::bundle {

namespace {

struct Expected
{
  const FileEntry* file = nullptr; // null for a directory or a link
  const LinkEntry* link = nullptr; // null for a directory or a file
  bool seen = false;

  std::string_view type() const { return file != nullptr ? "file" : link != nullptr ? "symbolic link" : "directory"; }
};

Status
write_all(int fd, const char* data, std::size_t size)
{
  while (size > 0) {
    const ssize_t put = ::write(fd, data, size);
    if (put < 0) {
      if (errno == EINTR) {
        continue;
      }
      return io_error(errno_message(errno));
    }
    data += put;
    size -= static_cast<std::size_t>(put);
  }
  return {};
}

// ---- the extraction pipeline ----------------------------------------------
// Threads (2 cores make the per-file SHA-256 the largest cost; it is spread
// over workers):
//   audit    decompresses (libarchive raw + zstd) and audits the structure;
//            hands each fully audited block on through a BlockSink;
//   reader   (the calling thread) runs the libarchive tar reader over those
//            blocks, applies the entry policy (names, manifest, duplicates,
//            types, sizes, limits), creates directories, and streams each
//            file's data into a FileJob;
//   workers  create each file (openat O_CREAT|O_EXCL|O_NOFOLLOW below its
//            parent's fd), write it, check its SHA-256 and size, set its mode.
// Bytes queued for workers are capped (k_max_bytes_in_flight). Errors keep
// the sequential order: an audit error wins; otherwise the error of the
// lowest entry (workers finish every job before the failing one).
constexpr std::size_t k_max_bytes_in_flight = 64u << 20;

struct FileJob
{
  std::uint64_t index = 0;
  const FileEntry* expected = nullptr;
  std::shared_ptr<UniqueFd> parent;
  std::string leaf;
  bool precreated = false; // made empty by prepare_entries(): open it, do not create it
  std::deque<std::vector<char>> chunks; // guarded by FilePipeline::m_mutex
  bool complete = false;
  bool aborted = false;
};

class FilePipeline
{
public:
  // Fewer workers than asked when threads cannot be created (a pids limit:
  // EAGAIN); with none, the reader writes each file itself (inline mode).
  FilePipeline(const Slice& slice, std::size_t workers) : m_slice(slice)
  {
    for (std::size_t i = 0; i < workers; ++i) {
      try {
        m_threads.emplace_back([this] { work(); });
      } catch (const std::system_error& e) {
        log::verbose("slice {}: {} of {} file writer threads ({}); going on with those",
                     in_quotes(m_slice.id), i, workers, e.what());
        break;
      }
    }
  }
  ~FilePipeline() { finish(); }
  FilePipeline(const FilePipeline&) = delete;
  FilePipeline& operator=(const FilePipeline&) = delete;

  void start(std::shared_ptr<FileJob> job)
  {
    if (inline_mode()) {
      return; // complete() writes it
    }
    std::lock_guard lock(m_mutex);
    m_pending.push_back(std::move(job));
    m_work.notify_one();
  }

  // Copies `size` bytes into the job; waits while too much is queued.
  // False once the pipeline stops (an error somewhere).
  bool append(FileJob& job, const char* data, std::size_t size)
  {
    std::vector<char> chunk(data, data + size);
    std::unique_lock lock(m_mutex);
    // Inline mode never waits: no worker would make room. One file's bytes
    // are held until complete() (bounded by the file size limit).
    m_space.wait(lock, [&] {
      return m_stopped || inline_mode() || m_in_flight == 0 || m_in_flight + size <= k_max_bytes_in_flight;
    });
    if (m_stopped) {
      return false;
    }
    m_in_flight += size;
    job.chunks.push_back(std::move(chunk));
    m_work.notify_all();
    return true;
  }

  void complete(FileJob& job)
  {
    {
      std::lock_guard lock(m_mutex);
      job.complete = true;
      m_work.notify_all();
    }
    if (inline_mode()) {
      if (auto written = write_job(job); !written) {
        std::lock_guard lock(m_mutex);
        release(job);
        if (!m_first_error || job.index < m_first_error->first) {
          m_first_error.emplace(job.index, std::move(written).error());
        }
        m_stopped = true;
      }
    }
  }

  bool inline_mode() const { return m_threads.empty(); }

  // The reader failed at entry `index`: jobs after it are dropped, the one
  // being streamed is aborted, the ones before it still finish.
  void stop_at(FileJob* current)
  {
    std::lock_guard lock(m_mutex);
    if (current != nullptr) {
      current->aborted = true;
    }
    m_stopped = true;
    m_work.notify_all();
    m_space.notify_all();
  }

  bool stopped()
  {
    std::lock_guard lock(m_mutex);
    return m_stopped;
  }

  // Waits for the workers; the first error by entry order.
  std::optional<std::pair<std::uint64_t, Error>> finish()
  {
    {
      std::lock_guard lock(m_mutex);
      m_no_more_jobs = true;
      m_work.notify_all();
    }
    for (auto& t : m_threads) {
      if (t.joinable()) {
        t.join();
      }
    }
    return m_first_error;
  }

private:
  void work()
  {
    while (true) {
      std::shared_ptr<FileJob> job;
      {
        std::unique_lock lock(m_mutex);
        m_work.wait(lock, [&] { return m_no_more_jobs || !m_pending.empty(); });
        if (m_pending.empty()) {
          return;
        }
        job = std::move(m_pending.front());
        m_pending.pop_front();
        if (m_first_error && job->index > m_first_error->first) {
          release(*job);
          continue;
        }
      }
      if (auto written = write_job(*job); !written) {
        std::lock_guard lock(m_mutex);
        release(*job);
        if (!m_first_error || job->index < m_first_error->first) {
          m_first_error.emplace(job->index, std::move(written).error());
        }
        m_stopped = true;
        m_space.notify_all();
        m_work.notify_all();
      }
    }
  }

  // Under m_mutex: drops the job's queued bytes.
  void release(FileJob& job)
  {
    for (const auto& c : job.chunks) {
      m_in_flight -= c.size();
    }
    job.chunks.clear();
    m_space.notify_all();
  }

  std::unexpected<Error> job_error(std::string_view code, std::string_view message) const
  {
    return verify_error(code, fmt::format("slice {}: {}", in_quotes(m_slice.id), message));
  }

  // Ok with nothing written when the job was aborted (the reader's error is
  // the one reported).
  Status write_job(FileJob& job)
  {
    const auto& expected = *job.expected;
    const auto& name = expected.path;
    UniqueFd out;
    if (job.precreated) {
      // prepare_entries() created it empty (O_EXCL) while the payload was
      // hashed. Still no link is followed, and it must be that file: regular,
      // empty, with no other name (a hard link planted in staging would point
      // the write elsewhere).
      out.reset(::openat(job.parent->get(), job.leaf.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
      if (!out) {
        if (errno == ELOOP) {
          return job_error("E_PATH", fmt::format("{} in staging became a symlink", in_quotes(name)));
        }
        return io_error(fmt::format("slice {}: cannot open {} in staging: {}", in_quotes(m_slice.id), in_quotes(name), errno_message(errno)));
      }
      struct stat st{};
      if (::fstat(out.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0 || st.st_nlink != 1) {
        return job_error("E_PATH", fmt::format("{} in staging is not the empty file the installer created", in_quotes(name)));
      }
    } else {
      out.reset(::openat(job.parent->get(), job.leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!out) {
        if (errno == EEXIST) {
          return job_error("E_DUPLICATE", fmt::format("{} already exists in staging (listed by two slices?)", in_quotes(name)));
        }
        return io_error(fmt::format("slice {}: cannot create {}: {}", in_quotes(m_slice.id), in_quotes(name), errno_message(errno)));
      }
    }
    Sha256 digest;
    std::uint64_t written = 0;
    while (true) {
      std::vector<char> chunk;
      {
        std::unique_lock lock(m_mutex);
        m_work.wait(lock, [&] { return job.aborted || job.complete || !job.chunks.empty(); });
        if (job.aborted) {
          release(job);
          return {};
        }
        if (job.chunks.empty()) {
          break; // complete
        }
        chunk = std::move(job.chunks.front());
        job.chunks.pop_front();
        m_in_flight -= chunk.size();
        m_space.notify_all();
      }
      digest.update(chunk.data(), chunk.size());
      if (auto s = write_all(out.get(), chunk.data(), chunk.size()); !s) {
        return io_error(fmt::format("slice {}: cannot write {}: {}", in_quotes(m_slice.id), in_quotes(name), s.error().message()));
      }
      written += chunk.size();
    }
    if (written != expected.size) {
      return job_error("E_ENTRY_SIZE", fmt::format("{}: {} bytes of data, the manifest says {}", in_quotes(name), written, expected.size));
    }
    const auto actual = digest.finish_hex();
    if (actual != expected.sha256) {
      return job_error("E_ENTRY_DIGEST", fmt::format("{}: SHA-256 {} but the manifest says {}", in_quotes(name), actual, expected.sha256));
    }
    // The manifest decides the mode; archive modes (setuid, 0777) never apply.
    if (::fchmod(out.get(), expected.mode == 0755 ? 0755 : 0644) != 0) {
      return io_error(fmt::format("slice {}: chmod {}: {}", in_quotes(m_slice.id), in_quotes(name), errno_message(errno)));
    }
    // Start the write-back now, so the installer's one syncfs() at the end
    // finds most of it done (no waiting here: this is not an fsync).
    (void)::sync_file_range(out.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
    return {};
  }

  const Slice& m_slice;
  std::mutex m_mutex;
  std::condition_variable m_work;
  std::condition_variable m_space;
  std::deque<std::shared_ptr<FileJob>> m_pending;
  std::size_t m_in_flight = 0;
  bool m_stopped = false;
  bool m_no_more_jobs = false;
  std::optional<std::pair<std::uint64_t, Error>> m_first_error;
  std::vector<std::thread> m_threads;
};


struct AuditedInput
{
  BlockSink* sink = nullptr;
  std::vector<char> current;
  bool audit_failed = false;
};

la_ssize_t
read_audited(archive* a, void* context, const void** buffer)
{
  auto* input = static_cast<AuditedInput*>(context);
  auto block = input->sink->pop();
  if (!block) {
    input->audit_failed = true;
    archive_set_error(a, EINVAL, "the structure audit refused the stream");
    return ARCHIVE_FATAL;
  }
  input->current = std::move(*block);
  *buffer = input->current.data();
  return static_cast<la_ssize_t>(input->current.size());
}

std::size_t
worker_count()
{
  const unsigned cores = std::thread::hardware_concurrency();
  return std::clamp<std::size_t>(cores == 0 ? 2 : cores, 1, 8);
}

class Extractor
{
public:
  Extractor(const Slice& slice, int staging, const ExtractLimits& limits, const std::vector<char>& created)
    : m_slice(slice), m_staging(staging), m_limits(limits), m_created(created)
  {
    m_expected.reserve(slice.directories.size() + slice.files.size() + slice.links.size());
    for (const auto& dir : slice.directories) {
      m_expected.emplace(dir, Expected{});
    }
    for (const auto& file : slice.files) {
      m_expected.emplace(file.path, Expected{&file, nullptr, false});
    }
    for (const auto& link : slice.links) {
      m_expected.emplace(link.path, Expected{nullptr, &link, false});
    }
  }

  // Reads the tar stream from `sink` (fed by the audit thread).
  Status run(BlockSink& sink)
  {
    AuditedInput input;
    input.sink = &sink;
    ArchivePtr a(archive_read_new(), &archive_read_free);
    if (!a) {
      return fail(Errc::internal, "archive_read_new failed");
    }
    // tar only, and no filter: the audit thread already took the zstd layer off.
    if (archive_read_support_format_tar(a.get()) != ARCHIVE_OK) {
      return fail(Errc::internal, "libarchive lacks tar support: " + archive_message(a.get()));
    }
    note_archive_reader_open();
    if (archive_read_open(a.get(), &input, nullptr, &read_audited, nullptr) != ARCHIVE_OK) {
      return error("E_PAYLOAD_FORMAT", fmt::format("payload is not a tar stream: {}", archive_message(a.get())));
    }
    FilePipeline pipeline(m_slice, worker_count());
    m_pipeline = &pipeline;
    std::optional<std::pair<std::uint64_t, Error>> failure;
    std::uint64_t entries = 0;
    while (true) {
      archive_entry* entry = nullptr;
      const int r = archive_read_next_header(a.get(), &entry);
      if (r == ARCHIVE_EOF) {
        break;
      }
      ++entries;
      auto step = [&]() -> Status {
        if (r != ARCHIVE_OK) {
          // WARN included: a header libarchive had to guess about is not one
          // our writer produced.
          return error("E_PAYLOAD_FORMAT", fmt::format("unreadable tar header: {}", archive_message(a.get())));
        }
        // Beyond the manifest's count an entry is a duplicate or not listed,
        // which extract_entry names precisely; this is the absolute cap.
        if (entries > m_limits.max_entries) {
          return error("E_LIMIT", fmt::format("more than {} entries", m_limits.max_entries));
        }
        return extract_entry(a.get(), entry, entries);
      }();
      if (!step) {
        failure.emplace(entries, std::move(step).error());
        break;
      }
      if (pipeline.stopped()) {
        break; // a worker failed; its error is reported below
      }
    }
    if (failure || m_current_job) {
      pipeline.stop_at(m_current_job.get());
    }
    auto worker_failure = pipeline.finish();
    m_pipeline = nullptr;
    if (worker_failure && (!failure || worker_failure->first < failure->first)) {
      failure = std::move(worker_failure);
    }
    if (failure) {
      return fail(std::move(failure->second));
    }
    for (const auto& [path, expected] : m_expected) {
      if (!expected.seen) {
        return error("E_ENTRY_MISSING", fmt::format("{} is listed in the manifest but not in the payload", in_quotes(path)));
      }
    }
    return {};
  }

private:
  std::unexpected<Error> error(std::string_view code, std::string_view message) const
  {
    return verify_error(code, fmt::format("slice {}: {}", in_quotes(m_slice.id), message));
  }

  Status extract_entry(archive* a, archive_entry* entry, std::uint64_t index)
  {
    const char* raw_name = archive_entry_pathname(entry);
    if (raw_name == nullptr || *raw_name == '\0') {
      return error("E_PATH", "entry without a name");
    }
    std::string_view encoded(raw_name);
    const auto type = archive_entry_filetype(entry);
    if (archive_entry_hardlink(entry) != nullptr) {
      return error("E_TYPE", fmt::format("{}: hard link entry (only regular files, directories and symbolic links)", in_quotes(encoded)));
    }
    const bool is_link = type == AE_IFLNK;
    if (archive_entry_symlink(entry) != nullptr && !is_link) {
      return error("E_TYPE", fmt::format("{}: link target on an entry that is not a symbolic link", in_quotes(encoded)));
    }
    if (type != AE_IFREG && type != AE_IFDIR && !is_link) {
      return error("E_TYPE", fmt::format("{}: entry of type 0{:o} (only regular files, directories and symbolic links)", in_quotes(encoded), static_cast<unsigned>(type)));
    }
    if (archive_entry_sparse_count(entry) > 0) {
      return error("E_TYPE", fmt::format("{}: sparse file entry", in_quotes(encoded)));
    }
    const bool is_dir = type == AE_IFDIR;
    if (is_dir && encoded.ends_with('/')) {
      encoded.remove_suffix(1); // the one trailing slash tar writes for directories
    }
    // Names in the stream are the manifest's spelling (encode_entry_path):
    // one spelling per name, ASCII whatever the locale.
    const auto decoded = decode_entry_path(encoded);
    if (!decoded) {
      return error("E_PATH", fmt::format("{}: not a name as the slice writer spells it (percent-encoding)", in_quotes(encoded)));
    }
    const std::string_view name = *decoded;
    PW_TRY(validate_entry_path(name, is_dir ? KindOnlyPath::allowed : KindOnlyPath::refused,
                               m_limits.max_path_length, m_limits.max_depth));
    const auto it = m_expected.find(std::string(name));
    if (it == m_expected.end()) {
      return error("E_ENTRY_NOT_IN_MANIFEST", fmt::format("{} is in the payload but not in the signed manifest", in_quotes(name)));
    }
    Expected& expected = it->second;
    if (expected.seen) {
      return error("E_DUPLICATE", fmt::format("{} appears twice in the payload", in_quotes(name)));
    }
    const std::string_view payload_type = is_dir ? "directory" : is_link ? "symbolic link" : "file";
    if (payload_type != expected.type()) {
      return error("E_TYPE", fmt::format("{} is a {} in the payload but a {} in the manifest", in_quotes(name), payload_type, expected.type()));
    }
    expected.seen = true;
    const auto parent = parent_of(name);
    if (!parent.empty()) {
      const auto p = m_expected.find(std::string(parent));
      if (p == m_expected.end() || !p->second.seen) {
        return error("E_PAYLOAD_FORMAT", fmt::format("{} comes before its directory {}", in_quotes(name), in_quotes(parent)));
      }
    }
    PW_ASSIGN(auto parent_fd, parent_directory(parent));
    const std::string leaf(leaf_of(name));
    if (is_dir) {
      return make_directory(parent_fd->get(), leaf, name);
    }
    if (is_link) {
      return make_link(entry, parent_fd->get(), leaf, *expected.link);
    }
    return stream_file(a, entry, std::move(parent_fd), leaf, *expected.file, index);
  }

  // A link is created only as the signed manifest states it: the target the
  // payload holds must be the manifest's, which validate() has checked leads
  // to a file of this slice inside the link's own cache. symlinkat() creates
  // the name (never through an existing one) and nothing follows it here.
  Status make_link(archive_entry* entry, int parent_fd, const std::string& leaf, const LinkEntry& expected)
  {
    const char* raw_target = archive_entry_symlink(entry);
    const auto target = decode_entry_path(raw_target == nullptr ? "" : raw_target);
    if (!target || *target != expected.target) {
      return error("E_LINK_TARGET", fmt::format("{}: link target {} but the manifest says {}", in_quotes(expected.path),
                                                 in_quotes(raw_target == nullptr ? "" : raw_target), in_quotes(expected.target)));
    }
    if (::symlinkat(target->c_str(), parent_fd, leaf.c_str()) != 0) {
      if (errno == EEXIST) {
        return error("E_DUPLICATE", fmt::format("{} already exists in staging (listed by two slices?)", in_quotes(expected.path)));
      }
      return io_error(fmt::format("slice {}: cannot create the link {}: {}", in_quotes(m_slice.id), in_quotes(expected.path), errno_message(errno)));
    }
    return {};
  }

  // The fds of the directories along the last path used, root first:
  // entries arrive sorted (a directory, then what is in it), so a parent is
  // almost always on this stack and no path is walked again.
  Result<std::shared_ptr<UniqueFd>> parent_directory(std::string_view parent)
  {
    while (!m_dir_stack.empty()) {
      const auto& top = m_dir_stack.back().first;
      if (top == parent) {
        return m_dir_stack.back().second;
      }
      if (top.empty() || (parent.size() > top.size() && parent.starts_with(top) && parent[top.size()] == '/')) {
        break; // an ancestor of `parent`: the rest is not on the stack
      }
      m_dir_stack.pop_back();
    }
    PW_ASSIGN(auto fd, open_directory_beneath(m_staging, parent));
    auto shared = std::make_shared<UniqueFd>(std::move(fd));
    m_dir_stack.emplace_back(std::string(parent), shared);
    return shared;
  }

  Status make_directory(int parent_fd, const std::string& leaf, std::string_view name)
  {
    if (::mkdirat(parent_fd, leaf.c_str(), 0700) != 0 && errno != EEXIST) {
      return io_error(fmt::format("slice {}: cannot create directory {}: {}", in_quotes(m_slice.id), in_quotes(name), errno_message(errno)));
    }
    // Exists from another slice, or just made: it must be a real directory.
    UniqueFd dir(::openat(parent_fd, leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) {
      return error("E_PATH", fmt::format("{} exists in staging and is not a directory: {}", in_quotes(name), errno_message(errno)));
    }
    if (::fchmod(dir.get(), 0755) != 0) {
      return io_error(fmt::format("slice {}: chmod {}: {}", in_quotes(m_slice.id), in_quotes(name), errno_message(errno)));
    }
    // The parent is on top of the stack (parent_directory() just returned it).
    m_dir_stack.emplace_back(std::string(name), std::make_shared<UniqueFd>(std::move(dir)));
    return {};
  }

  // Checks the header against the manifest and streams the data to a worker,
  // counting bytes against the entry's size and the slice's limits.
  Status stream_file(archive* a, archive_entry* entry, std::shared_ptr<UniqueFd> parent_fd, const std::string& leaf,
                     const FileEntry& expected, std::uint64_t index)
  {
    const auto& name = expected.path;
    if (!archive_entry_size_is_set(entry) || archive_entry_size(entry) < 0 ||
        static_cast<std::uint64_t>(archive_entry_size(entry)) != expected.size) {
      return error("E_ENTRY_SIZE", fmt::format("{}: header size {} but the manifest says {}", in_quotes(name),
                                               archive_entry_size(entry), expected.size));
    }
    if (expected.size > m_limits.max_file_bytes) {
      return error("E_LIMIT", fmt::format("{}: {} bytes (at most {})", in_quotes(name), expected.size, m_limits.max_file_bytes));
    }
    auto job = std::make_shared<FileJob>();
    job->index = index;
    job->expected = &expected;
    job->parent = std::move(parent_fd);
    job->leaf = leaf;
    const auto file_index = static_cast<std::size_t>(&expected - m_slice.files.data());
    job->precreated = file_index < m_created.size() && m_created[file_index] != 0;
    m_current_job = job;
    m_pipeline->start(job);
    std::uint64_t written = 0;
    while (true) {
      const void* block = nullptr;
      std::size_t size = 0;
      la_int64_t offset = 0;
      const int r = archive_read_data_block(a, &block, &size, &offset);
      if (r == ARCHIVE_EOF) {
        break;
      }
      if (r != ARCHIVE_OK) {
        return error("E_PAYLOAD_FORMAT", fmt::format("{}: cannot read entry data: {}", in_quotes(name), archive_message(a)));
      }
      if (offset < 0 || static_cast<std::uint64_t>(offset) != written) {
        return error("E_PAYLOAD_FORMAT", fmt::format("{}: entry data with a hole at offset {}", in_quotes(name), written));
      }
      written += size;
      m_total += size;
      if (written > expected.size) {
        return error("E_ENTRY_SIZE", fmt::format("{}: more data than the {} bytes listed", in_quotes(name), expected.size));
      }
      if (m_total > m_slice.uncompressed_size || m_total > m_limits.max_uncompressed_bytes) {
        return error("E_LIMIT", fmt::format("more than {} bytes of file data", std::min(m_slice.uncompressed_size, m_limits.max_uncompressed_bytes)));
      }
      if (size > 0 && !m_pipeline->append(*job, static_cast<const char*>(block), size)) {
        return {}; // a worker failed: its error is reported
      }
    }
    if (written != expected.size) {
      return error("E_ENTRY_SIZE", fmt::format("{}: {} bytes of data, the manifest says {}", in_quotes(name), written, expected.size));
    }
    m_pipeline->complete(*job);
    m_current_job.reset();
    return {};
  }

  const Slice& m_slice;
  int m_staging;
  const ExtractLimits& m_limits;
  const std::vector<char>& m_created; // per slice.files index: made empty by prepare_entries()
  std::unordered_map<std::string, Expected> m_expected;
  std::uint64_t m_total = 0;
  std::vector<std::pair<std::string, std::shared_ptr<UniqueFd>>> m_dir_stack;
  FilePipeline* m_pipeline = nullptr;
  std::shared_ptr<FileJob> m_current_job;
};

} // namespace

Status
extract_entries(const Slice& slice, int staging, const ExtractLimits& limits, const std::vector<char>& created,
                BlockSink& sink)
{
  Extractor extractor(slice, staging, limits, created);
  return extractor.run(sink);
}

} // namespace prewarm::bundle
