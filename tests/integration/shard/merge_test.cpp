// SPDX-License-Identifier: Apache-2.0
// prewarm merge on bundles written by the real bundle writer (no device
// needed): partials of one build merge into exactly the bytes of the
// monolithic bundle; partials that do not belong together are refused with
// the named check, and nothing is written.
#include "base/files.hpp"
#include "bundle/bundle_files.hpp"
#include "bundle/signature.hpp"
#include "pack/bundle_writer.hpp"
#include "pack/key_pair.hpp"
#include "pack/merge.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace prewarm::pack {
namespace {

namespace fs = std::filesystem;

SysSeconds
at(int year, unsigned month, unsigned day)
{
  using namespace std::chrono;
  return SysSeconds(sys_days(std::chrono::year(year) / month / day));
}

void
put(const fs::path& file, const std::string& bytes)
{
  fs::create_directories(file.parent_path());
  ASSERT_TRUE(write_file_atomic(file, bytes, 0644, Durability::none)) << file;
}

// Every regular file under `dir` by relative path, with its bytes.
std::map<std::string, std::string>
tree_bytes(const fs::path& dir)
{
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const auto rel = fs::relative(entry.path(), dir).string();
    if (entry.is_regular_file()) {
      auto bytes = read_file(entry.path().string());
      out[rel] = bytes ? *bytes : "<unreadable>";
    } else {
      out[rel] = "<dir>";
    }
  }
  return out;
}

const std::vector<bundle::Requirement> k_cpu_requirements = {
  {"opencl.device", "==", "pthread-test_only-cpu"},
  {"opencl.driver", "==", "3.1"},
};
const std::vector<bundle::Requirement> k_other_requirements = {
  {"opencl.device", "==", "test_only-other-device"},
};

class MergeTest : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = TempDir::create("prewarm-merge-test-");
    ASSERT_TRUE(dir) << dir.error().message();
    m_dir.emplace(std::move(*dir));
    auto shard_key = PrivateKey::generate();
    auto release_key = PrivateKey::generate();
    ASSERT_TRUE(shard_key && release_key);
    m_shard_key.emplace(std::move(*shard_key));
    m_release_key.emplace(std::move(*release_key));

    // Job 1 and job 2 fill the cpu slice (split across the two shards): both
    // compiled the shared kernel (same bytes), each its own one. Job 3 fills
    // another slice, in shard 2 only.
    put(root() / "job1/programs/shared.bin", "shared kernel binary");
    put(root() / "job1/programs/a/one.bin", "kernel one");
    put(root() / "job1/pocl/aa/program.bc", "pocl one");
    put(root() / "job2/programs/shared.bin", "shared kernel binary");
    put(root() / "job2/programs/b/two.bin", "kernel two");
    put(root() / "job3/pocl/cc/program.bc", "pocl three");
    // What a monolithic build's staging holds: all jobs of a slice together.
    for (const char* job : {"job1", "job2"}) {
      fs::copy(root() / job, root() / "mono-cpu", fs::copy_options::recursive | fs::copy_options::skip_existing);
    }
  }

  fs::path root() const { return m_dir->path(); }

  BundleSpec header() const
  {
    BundleSpec spec;
    spec.channel = "test-only";
    spec.serial = 3;
    spec.issued_at = at(2026, 1, 1);
    spec.expires = at(2099, 1, 1);
    spec.archive_mtime = spec.issued_at;
    spec.build_manifest_sha256 = std::string(64, 'a');
    return spec;
  }

  SliceInput cpu_slice(const std::string& staging, std::vector<std::string> jobs) const
  {
    return SliceInput{"cpu-000000000001", root() / staging, k_cpu_requirements, std::move(jobs)};
  }

  fs::path write(const std::string& name, BundleSpec spec, const PrivateKey& key)
  {
    const std::vector<PrivateKey> keys{key};
    auto written = write_bundle(spec, keys, root() / name);
    EXPECT_TRUE(written) << written.error().message();
    return root() / name;
  }

  fs::path shard1(BundleSpec spec)
  {
    spec.slices = {cpu_slice("job1", {"cpu/model/fp32"})};
    return write("shard1", spec, *m_shard_key);
  }
  fs::path shard2(BundleSpec spec, const std::string& name = "shard2")
  {
    spec.slices = {cpu_slice("job2", {"cpu/model/fp16"}),
                   SliceInput{"other-000000000002", root() / "job3", k_other_requirements, {"other/model/fp32"}}};
    return write(name, spec, *m_shard_key);
  }

  bundle::TrustStore shard_trust() const
  {
    bundle::TrustStore trust;
    trust.keys.push_back({m_shard_key->public_key(), {}, {}});
    return trust;
  }

  Result<MergeResult> merge(std::vector<fs::path> partials, const std::string& out = "merged")
  {
    const std::vector<PrivateKey> keys{*m_release_key};
    return merge_bundles(partials, shard_trust(), keys, root() / out, at(2026, 6, 1));
  }

  void expect_refused(const Result<MergeResult>& result, const std::string& code, const std::string& out = "merged")
  {
    ASSERT_FALSE(result) << "merge succeeded, expected " << code;
    EXPECT_EQ(result.error().code(), code) << result.error().message();
    EXPECT_EQ(result.error().category(), Errc::verify) << result.error().message();
    EXPECT_FALSE(fs::exists(root() / out)) << "a refused merge left a bundle behind";
  }

  std::optional<TempDir> m_dir;
  std::optional<PrivateKey> m_shard_key;
  std::optional<PrivateKey> m_release_key;
};

TEST_F(MergeTest, ShardsMergedEqualTheMonolithicBundleByteForByte)
{
  BundleSpec mono = header();
  mono.slices = {cpu_slice("mono-cpu", {"cpu/model/fp16", "cpu/model/fp32"}),
                 SliceInput{"other-000000000002", root() / "job3", k_other_requirements, {"other/model/fp32"}}};
  const fs::path monolithic = write("monolithic", mono, *m_release_key);

  const auto merged = merge({shard1(header()), shard2(header())});
  ASSERT_TRUE(merged) << merged.error().message();
  EXPECT_EQ(merged->partial_count, 2U);
  EXPECT_EQ(merged->job_count, 3U);
  EXPECT_EQ(merged->joined_slice_ids, std::vector<std::string>{"cpu-000000000001"});
  EXPECT_EQ(tree_bytes(root() / "merged"), tree_bytes(monolithic));
}

TEST_F(MergeTest, LinksAndNamesSurviveTheMerge)
{
  // clFFT's device directory and darktable's link, in both shards' part of
  // the cpu slice and in the monolithic staging.
  for (const char* staging : {"job1", "job2", "mono-cpu"}) {
    put(root() / staging / "pocl/AMD EPYC (x)/fft.bin", "fft");
    fs::create_symlink("fft.bin", root() / staging / "pocl/AMD EPYC (x)/blur.cl.bin");
  }
  BundleSpec mono = header();
  mono.slices = {cpu_slice("mono-cpu", {"cpu/model/fp16", "cpu/model/fp32"}),
                 SliceInput{"other-000000000002", root() / "job3", k_other_requirements, {"other/model/fp32"}}};
  const fs::path monolithic = write("monolithic", mono, *m_release_key);
  const auto merged = merge({shard1(header()), shard2(header())});
  ASSERT_TRUE(merged) << merged.error().message();
  EXPECT_EQ(tree_bytes(root() / "merged"), tree_bytes(monolithic));
  auto files = bundle::load_bundle_files(root() / "merged");
  ASSERT_TRUE(files);
  const auto manifest = bundle::parse(files->manifest_bytes);
  ASSERT_TRUE(manifest) << manifest.error().message();
  EXPECT_EQ(manifest->slices.at(0).links,
            (std::vector<bundle::LinkEntry>{{"pocl/AMD EPYC (x)/blur.cl.bin", "fft.bin"}}));
}

TEST_F(MergeTest, PartialOrderDoesNotMatter)
{
  const auto a = merge({shard1(header()), shard2(header())}, "merged-a");
  const auto b = merge({root() / "shard2", root() / "shard1"}, "merged-b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(tree_bytes(root() / "merged-a"), tree_bytes(root() / "merged-b"));
}

TEST_F(MergeTest, MergedBundleVerifiesWithTheReleaseKeyOnly)
{
  ASSERT_TRUE(merge({shard1(header()), shard2(header())}));
  auto files = bundle::load_bundle_files(root() / "merged");
  ASSERT_TRUE(files);
  bundle::TrustStore release;
  release.keys.push_back({m_release_key->public_key(), {}, {}});
  EXPECT_TRUE(bundle::verify_manifest_signature(files->manifest_bytes, files->envelope_bytes, release,
                                                at(2026, 6, 1)));
  EXPECT_FALSE(bundle::verify_manifest_signature(files->manifest_bytes, files->envelope_bytes, shard_trust(),
                                                 at(2026, 6, 1)));
}

TEST_F(MergeTest, RefusesAPartialGivenTwice)
{
  const auto one = shard1(header());
  expect_refused(merge({one, one, shard2(header())}), "E_MERGE_DUPLICATE");
}

TEST_F(MergeTest, OneJobFillingTwoSlicesOfItsPartialMerges)
{
  // An Intel job fills its AOT slice and the NEO slice of the card's
  // entries: the same job line in two slices of one partial is no overlap.
  BundleSpec spec = header();
  spec.slices = {cpu_slice("job2", {"cpu/model/fp16 aot virtual-device"}),
                 SliceInput{"other-000000000002", root() / "job3", k_other_requirements,
                            {"cpu/model/fp16 aot virtual-device"}}};
  const auto both = write("both", spec, *m_shard_key);
  const auto merged = merge({shard1(header()), both});
  ASSERT_TRUE(merged) << merged.error().message();
  EXPECT_EQ(merged->job_count, 2U);
  // Alone, too: merging one partial is how a one-runner pipeline re-signs.
  const auto alone = merge({both}, "merged-alone");
  ASSERT_TRUE(alone) << alone.error().message();
}

TEST_F(MergeTest, RefusesOneJobIdInTwoPartialsEvenWithOtherDetails)
{
  // Job lines are "<id> <details>"; a runner may describe the same job
  // differently (executor, device), it is still the same job.
  BundleSpec spec = header();
  spec.slices = {cpu_slice("job2", {"cpu/model/fp32 run builtin on another runner"})};
  const auto again = write("again", spec, *m_shard_key);
  expect_refused(merge({shard1(header()), again}), "E_MERGE_DUPLICATE");
}

TEST_F(MergeTest, RefusesPartialsOfDifferentBuilds)
{
  const auto one = shard1(header());
  BundleSpec other = header();
  other.serial = 4;
  expect_refused(merge({one, shard2(other, "serial4")}), "E_MERGE_MISMATCH");
  other = header();
  other.channel = "test-only-other";
  expect_refused(merge({one, shard2(other, "channel")}), "E_MERGE_MISMATCH");
  other = header();
  other.build_manifest_sha256 = std::string(64, 'b');
  expect_refused(merge({one, shard2(other, "manifest")}), "E_MERGE_MISMATCH");
  other = header();
  other.producer_extra = "test_only-other-producer";
  expect_refused(merge({one, shard2(other, "producer")}), "E_MERGE_MISMATCH");
}

TEST_F(MergeTest, OnePathWithDifferentContentKeepsTheFirstJobsCopy)
{
  // PoCL writes different bytes for one cache key in different processes;
  // the monolithic build keeps the copy of the job that ran first.
  put(root() / "job2/programs/shared.bin", "a different binary under the same name");
  BundleSpec mono = header();
  mono.slices = {cpu_slice("mono-cpu", {"cpu/model/fp16", "cpu/model/fp32"}),
                 SliceInput{"other-000000000002", root() / "job3", k_other_requirements, {"other/model/fp32"}}};
  // "cpu/model/fp16" (shard 2) sorts first: its copy is the one kept.
  put(root() / "mono-cpu/programs/shared.bin", "a different binary under the same name");
  const fs::path monolithic = write("monolithic", mono, *m_release_key);

  const auto merged = merge({shard1(header()), shard2(header())});
  ASSERT_TRUE(merged) << merged.error().message();
  EXPECT_EQ(merged->differing_files, 1U);
  EXPECT_EQ(tree_bytes(root() / "merged"), tree_bytes(monolithic));
}

TEST_F(MergeTest, RefusesOneSliceIdWithDifferentRequirements)
{
  BundleSpec spec = header();
  spec.slices = {SliceInput{"cpu-000000000001", root() / "job2", k_other_requirements, {"cpu/model/fp16"}}};
  const auto odd = write("odd", spec, *m_shard_key);
  expect_refused(merge({shard1(header()), odd}), "E_MERGE_CONFLICT");
}

TEST_F(MergeTest, RefusesATamperedPayload)
{
  const auto one = shard1(header());
  const auto two = shard2(header());
  const auto payload = bundle::slice_payload_path(two, "other-000000000002");
  auto bytes = read_file(payload.string());
  ASSERT_TRUE(bytes && bytes->size() > 40);
  (*bytes)[40] = static_cast<char>((*bytes)[40] ^ 0x01);
  ASSERT_TRUE(write_file_atomic(payload, *bytes, 0644, Durability::none));
  expect_refused(merge({one, two}), "E_PAYLOAD_DIGEST");
}

TEST_F(MergeTest, RefusesAPartialSignedByAnUntrustedKey)
{
  auto stranger = PrivateKey::generate();
  ASSERT_TRUE(stranger);
  BundleSpec spec = header();
  spec.slices = {cpu_slice("job2", {"cpu/model/fp16"})};
  const auto foreign = write("foreign", spec, *stranger);
  const auto result = merge({shard1(header()), foreign});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().category(), Errc::verify);
  EXPECT_TRUE(result.error().code().starts_with("E_SIG")) << result.error().code();
  EXPECT_FALSE(fs::exists(root() / "merged"));
}

// A merged bundle that expires within a day of being written is refused as
// `prewarm build` refuses one (naming SOURCE_DATE_EPOCH and bundle.expires),
// or written with a warning when asked.
TEST_F(MergeTest, RefusesAMergedBundleThatExpiresWithinADay)
{
  BundleSpec spec = header();
  spec.expires = at(2026, 6, 1) + std::chrono::hours(12); // the merge's "now" is 2026-06-01
  const auto partial = shard1(spec);
  const auto refused = merge({partial});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), "E_EXPIRES_SOON");
  EXPECT_EQ(refused.error().category(), Errc::usage);
  EXPECT_NE(refused.error().message().find("SOURCE_DATE_EPOCH"), std::string::npos) << refused.error().message();
  EXPECT_NE(refused.error().message().find("bundle.expires"), std::string::npos) << refused.error().message();
  EXPECT_FALSE(fs::exists(root() / "merged"));

  const std::vector<fs::path> partials{partial};
  const std::vector<PrivateKey> keys{*m_release_key};
  const auto warned = merge_bundles(partials, shard_trust(), keys, root() / "merged", at(2026, 6, 1),
                                    ExpiryPolicy::warn);
  ASSERT_TRUE(warned) << warned.error().message();
  EXPECT_TRUE(fs::exists(root() / "merged" / "manifest"));
}

TEST_F(MergeTest, RefusesAnExpiredPartial)
{
  BundleSpec spec = header();
  spec.expires = at(2026, 2, 1); // before the merge's "now" (2026-06-01)
  expect_refused(merge({shard1(spec)}), "E_EXPIRED");
}

} // namespace
} // namespace prewarm::pack
