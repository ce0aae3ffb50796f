// SPDX-License-Identifier: Apache-2.0
// A file written during a watched run is reused only while it is still the
// same file (cache_usage.hpp): OpenCV's access pattern (O_RDWR, only read) is
// reuse; an entry truncated and rewritten in place, or unlinked and created
// again, is new even with the same bytes (onnxruntime-openvino's blob on the
// CPU). The accesses are real syscalls under a real inotify watch.
#include "audit/access_watch.hpp"
#include "audit/cache_usage.hpp"
#include "audit/file_inventory.hpp"

#include "audit_scratch.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <functional>
#include <limits>

namespace fs = std::filesystem;
using namespace prewarm::audit;
using prewarm::audit::testing::Scratch;
using prewarm::audit::testing::write_file;

namespace {

constexpr std::uint64_t k_hash_all = std::numeric_limits<std::uint64_t>::max();

// Snapshot (hashing up to `hash_up_to`), watch, act, measure.
KindUsage
watched(const fs::path& dir, std::uint64_t hash_up_to, const std::function<void()>& act)
{
  const auto states = snapshot_files(dir, hash_up_to);
  EXPECT_TRUE(states.has_value());
  const auto before = list_files(dir);
  auto watch = AccessWatch::start({{"custom/app", dir}});
  EXPECT_TRUE(watch.has_value());
  act();
  const auto record = (*watch)->stop();
  const auto after = list_files(dir);
  return measure_kind("custom/app", dir, *before, *after, &record.kinds.at("custom/app"), &*states);
}

void
read_write_open_read_only(const fs::path& file)
{
  const int fd = ::open(file.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::array<char, 16> buffer{};
  EXPECT_GT(::read(fd, buffer.data(), buffer.size()), 0);
  ::close(fd); // IN_CLOSE_WRITE: the kernel reports a write-open closing, written or not
}

void
rewrite(const fs::path& file, const std::string& text)
{
  const int fd = ::open(file.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
}

} // namespace

TEST(ContentChange, OpenedReadWriteButOnlyReadIsReuse)
{
  Scratch s;
  write_file(s.dir / "kernels/blur.bin", "binary of blur");
  const auto usage = watched(s.dir, k_hash_all, [&] { read_write_open_read_only(s.dir / "kernels/blur.bin"); });
  EXPECT_EQ(usage.reused_files, 1u);
  EXPECT_EQ(usage.new_files, 0u);
  EXPECT_TRUE(usage.hit()) << usage.summary();
}

TEST(ContentChange, TruncatedAndRewrittenWithTheSameBytesIsNew)
{
  Scratch s;
  write_file(s.dir / "ab/model.blob", "compiled model blob");
  // An old mtime, so that the rewrite cannot fall in the snapshot's clock tick.
  const std::array<timespec, 2> old_times{timespec{1'000'000, 0}, timespec{1'000'000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (s.dir / "ab/model.blob").c_str(), old_times.data(), 0), 0);
  const auto usage = watched(s.dir, k_hash_all, [&] {
    read_write_open_read_only(s.dir / "ab/model.blob");
    rewrite(s.dir / "ab/model.blob", "compiled model blob");
  });
  EXPECT_EQ(usage.reused_files, 0u) << usage.summary();
  EXPECT_EQ(usage.new_files, 1u) << usage.summary();
  EXPECT_EQ(usage.rewritten_files, 1u) << usage.summary();
  EXPECT_FALSE(usage.hit());
}

TEST(ContentChange, UnlinkedAndCreatedAgainWithTheSameBytesIsNew)
{
  Scratch s;
  write_file(s.dir / "ab/model.blob", "compiled model blob");
  const auto usage = watched(s.dir, k_hash_all, [&] {
    read_write_open_read_only(s.dir / "ab/model.blob");
    // Keep the old inode alive so the new file cannot reuse its number.
    const int keep = ::open((s.dir / "ab/model.blob").c_str(), O_RDONLY);
    ASSERT_GE(keep, 0);
    ASSERT_EQ(::unlink((s.dir / "ab/model.blob").c_str()), 0);
    write_file(s.dir / "ab/model.blob", "compiled model blob");
    ::close(keep);
  });
  EXPECT_EQ(usage.reused_files, 0u) << usage.summary();
  EXPECT_EQ(usage.new_files, 1u) << usage.summary();
  EXPECT_FALSE(usage.hit());
}

TEST(ContentChange, InductorsBestConfigRewrittenOnAHitIsBookkeeping)
{
  Scratch s;
  write_file(s.dir / "ab/kernel.best_config", R"({"XBLOCK": 128, "num_warps": 4})");
  write_file(s.dir / "ab/kernel.py", "source");
  const auto states = snapshot_files(s.dir, k_hash_all);
  ASSERT_TRUE(states.has_value());
  const auto before = list_files(s.dir);
  auto watch = AccessWatch::start({{"inductor", s.dir}});
  ASSERT_TRUE(watch.has_value());
  read_write_open_read_only(s.dir / "ab/kernel.py");
  rewrite(s.dir / "ab/kernel.best_config", R"({"XBLOCK": 128, "num_warps": 4})");
  const auto record = (*watch)->stop();
  const auto after = list_files(s.dir);
  const auto usage = measure_kind("inductor", s.dir, *before, *after, &record.kinds.at("inductor"), &*states);
  EXPECT_EQ(usage.files_before, 1u) << "the .best_config is not an entry";
  EXPECT_EQ(usage.reused_files, 1u);
  EXPECT_EQ(usage.new_files, 0u) << usage.summary();
}

TEST(ContentChange, RewrittenWithOtherBytesIsNew)
{
  Scratch s;
  write_file(s.dir / "ab/kernel.best_config", R"({"XBLOCK": 128, "num_warps": 4})");
  const auto usage =
    watched(s.dir, k_hash_all, [&] { rewrite(s.dir / "ab/kernel.best_config", R"({"XBLOCK": 256, "num_warps": 8})"); });
  EXPECT_EQ(usage.new_files, 1u);
  EXPECT_FALSE(usage.hit());
  EXPECT_EQ(usage.new_file_paths, (std::vector<std::string>{"ab/kernel.best_config"}));
}

TEST(ContentChange, UnhashedFilesAreComparedBySizeAndMtime)
{
  Scratch s;
  write_file(s.dir / "same", "0123456789");
  write_file(s.dir / "touched", "0123456789");
  // An old mtime, so that a rewrite within the same clock tick still differs.
  const std::array<timespec, 2> old_times{timespec{1'000'000, 0}, timespec{1'000'000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (s.dir / "touched").c_str(), old_times.data(), 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, (s.dir / "same").c_str(), old_times.data(), 0), 0);
  const auto usage = watched(s.dir, 0, [&] {
    read_write_open_read_only(s.dir / "same");
    rewrite(s.dir / "touched", "0123456789");
  });
  EXPECT_EQ(usage.reused_files, 1u) << "opened O_RDWR, size and mtime unchanged";
  EXPECT_EQ(usage.new_files, 1u) << "same size, new mtime, no digest to say the bytes are the same";
}

TEST(ContentChange, WithoutStatesEveryWriteCounts)
{
  Scratch s;
  write_file(s.dir / "kernels/blur.bin", "binary of blur");
  const auto before = list_files(s.dir);
  auto watch = AccessWatch::start({{"k", s.dir}});
  ASSERT_TRUE(watch.has_value());
  read_write_open_read_only(s.dir / "kernels/blur.bin");
  const auto record = (*watch)->stop();
  const auto usage = measure_kind("k", s.dir, *before, *before, &record.kinds.at("k"));
  EXPECT_EQ(usage.new_files, 1u) << "the old rule, kept where nothing was recorded before the run";
}

TEST(ContentChange, NotWatchedButStatesTakenSeesChangedFiles)
{
  Scratch s;
  write_file(s.dir / "a", "one");
  write_file(s.dir / "b", "two");
  const auto states = snapshot_files(s.dir, k_hash_all);
  ASSERT_TRUE(states.has_value());
  const auto before = list_files(s.dir);
  write_file(s.dir / "b", "TWO");
  const auto usage = measure_kind("k", s.dir, *before, *before, nullptr, &*states);
  EXPECT_EQ(usage.new_files, 1u);
  EXPECT_FALSE(usage.reused_files.has_value()) << "reuse is not known without a watch";
}
