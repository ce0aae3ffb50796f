// SPDX-License-Identifier: Apache-2.0
// Entry names on small cache trees laid out as kernel-caches.md §7/§8
// describe Triton and Inductor caches (no GPU here to make real ones).
#include "audit/cache_entries.hpp"
#include "audit/cache_usage.hpp"

#include "audit_scratch.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace prewarm::audit;
using prewarm::audit::testing::Scratch;
using prewarm::audit::testing::write_file;

namespace {
// A Triton entry: <hash>/<name>.json (metadata), the group file, a cubin.
void
triton_entry(const fs::path& root, const std::string& hash, const std::string& kernel)
{
  write_file(root / hash / (kernel + ".json"), R"({"name": ")" + kernel + R"(", "num_warps": 4})");
  write_file(root / hash / ("__grp__" + kernel + ".json"), R"({"child_paths": {}})");
  write_file(root / hash / (kernel + ".cubin"), "ELF");
}
} // namespace

TEST(CacheEntries, TritonEntriesAreNamedByMetadataName)
{
  Scratch s;
  triton_entry(s.dir, "OQ6XBR3G", "triton_poi_fused_add_0");
  EXPECT_EQ(entry_of("triton", "OQ6XBR3G/triton_poi_fused_add_0.cubin"), "OQ6XBR3G");
  EXPECT_EQ(entry_label("triton", s.dir, "OQ6XBR3G"), "kernel triton_poi_fused_add_0");
  EXPECT_EQ(entry_kernel_names("triton", s.dir, "OQ6XBR3G"), (std::set<std::string>{"triton_poi_fused_add_0"}));
}

TEST(CacheEntries, InductorGraphKeysAndItsTritonKernels)
{
  Scratch s;
  write_file(s.dir / "fxgraph/ab/fabcdef123/entry", "pickle");
  triton_entry(s.dir / "triton/0", "XYZ", "triton_red_fused_sum_1");
  EXPECT_EQ(entry_of("inductor", "fxgraph/ab/fabcdef123/entry"), "fxgraph/ab/fabcdef123");
  EXPECT_EQ(entry_label("inductor", s.dir, "fxgraph/ab/fabcdef123"), "graph fabcdef123");
  EXPECT_EQ(entry_of("inductor", "triton/0/XYZ/triton_red_fused_sum_1.json"), "triton/0/XYZ");
  EXPECT_EQ(entry_label("inductor", s.dir, "triton/0/XYZ"), "kernel triton_red_fused_sum_1");
  EXPECT_TRUE(is_bookkeeping_path("inductor", "fxgraph/ab/fabcdef123/entry.lock"));
  EXPECT_TRUE(is_bookkeeping_path("inductor", "triton/0/tmp.pid_1_abc/x.json"));
}

// tinygrad 0.14 keeps its cache in SQLite's WAL mode: every connection
// rewrites cache.db-shm, so a hit proof that counted it called a run that
// compiled nothing "MISSED ... 1 new (1 rewritten)" (bundle/app_hint.hpp).
TEST(CacheEntries, SqliteIndexOfACustomCacheIsBookkeeping)
{
  EXPECT_TRUE(is_bookkeeping_path("custom/tinygrad", "cache.db-shm"));
  EXPECT_TRUE(is_bookkeeping_path("custom/tinygrad", "tinygrad/cache.db-shm"));
  EXPECT_FALSE(is_bookkeeping_path("custom/tinygrad", "cache.db"));
  EXPECT_FALSE(is_bookkeeping_path("custom/tinygrad", "cache.db-wal"));
  EXPECT_FALSE(is_bookkeeping_path("pocl", "cache.db-shm")) << "an application's rule, for its custom caches";
}

TEST(CacheEntries, CudaIndexIsBookkeepingAndEntriesAreFiles)
{
  EXPECT_TRUE(is_bookkeeping_path("cuda", "index"));
  EXPECT_FALSE(is_bookkeeping_path("cuda", "a/3f/9c12"));
  EXPECT_EQ(entry_of("cuda", "a/3f/9c12"), "a/3f/9c12");
}

TEST(CacheEntries, ProgramStoreKeys)
{
  const std::string key(64, 'a');
  EXPECT_EQ(entry_of("programs", "aa/" + key + ".bin"), key);
  EXPECT_EQ(entry_of("programs", "aa/" + key + ".meta"), key);
  Scratch s;
  EXPECT_EQ(entry_label("programs", s.dir, key), "key aaaaaaaaaaaaaaaa");
}

// NEO 26.27's layout (measured on the virtual device): NEO_CACHE_DIR/<d>/<d>/
// <16 hex>.cl_cache per program; config.file, stats, key traces and mkstemp
// temporaries beside them on a hit as on a miss.
TEST(CacheEntries, NeoEntriesAreFilesAndItsBookkeepingIsNot)
{
  EXPECT_EQ(entry_of("neo", "a/b/0123456789abcdef.cl_cache"), "a/b/0123456789abcdef.cl_cache");
  EXPECT_NE(entry_of("neo", "a/b/0123456789abcdef.cl_cache"), entry_of("neo", "a/b/fedcba9876543210.cl_cache"))
    << "two programs under one directory are two entries";
  Scratch s;
  EXPECT_EQ(entry_label("neo", s.dir, "a/b/0123456789abcdef.cl_cache"), "OpenCL program 0123456789abcdef");
  EXPECT_EQ(entry_label("neo", s.dir, "a/b/0123456789abcdef.l0_cache"), "Level Zero module 0123456789abcdef");
  for (const char* path : {"config.file", "stats", "a/b/0123456789abcdef.trace", "a/b/0123456789abcdef.input",
                           "a/b/cl_cache.Xa81qZ", "l0_cache.000abc"}) {
    EXPECT_TRUE(is_bookkeeping_path("neo", path)) << path;
  }
  EXPECT_FALSE(is_bookkeeping_path("neo", "a/b/0123456789abcdef.cl_cache"));
}

TEST(CacheUsage, NeoMissNamesEachNewProgram)
{
  Scratch s;
  const FileSet before = {"a/b/1111111111111111.cl_cache", "config.file"};
  auto after = before;
  after.insert(
    {"a/b/2222222222222222.cl_cache", "a/b/3333333333333333.cl_cache", "stats", "a/b/2222222222222222.trace"});
  KindAccess access;
  access.opened = {"config.file", "stats"};
  access.written = {"config.file", "stats"};
  const auto usage = measure_kind("neo", s.dir, before, after, &access);
  EXPECT_EQ(usage.files_before, 1u);
  EXPECT_EQ(usage.new_files, 2u);
  EXPECT_EQ(usage.reused_files, 0u);
  ASSERT_EQ(usage.new_entries.size(), 2u);
  EXPECT_EQ(usage.new_entries[0].label, "OpenCL program 2222222222222222");
  EXPECT_FALSE(usage.hit());
}

TEST(CacheEntries, UnknownKindsGroupByFirstComponent)
{
  EXPECT_EQ(entry_of("hashcat", "kernels/m00000_a3-pure.kernel"), "kernels");
  EXPECT_FALSE(is_bookkeeping_path("hashcat", "kernels/x"));
}

// A custom cache's entries are its files, not its top folder (which names
// the cache: onnxruntime-openvino's openvino-ep, PyTensor's compiledir_...).
TEST(CacheEntries, CustomCacheEntriesAreTheirFiles)
{
  EXPECT_EQ(entry_of("custom/ort", "openvino-ep/8c1f.blob"), "openvino-ep/8c1f.blob");
  EXPECT_EQ(entry_of("custom/pytensor", "compiledir_Linux-6.1-x86_64/tmp3k2j/mod.so"),
            "compiledir_Linux-6.1-x86_64/tmp3k2j/mod.so");
}

TEST(CacheUsage, NewTritonKernelIsNamedAndUnwatchedReuseIsUnknown)
{
  Scratch s;
  triton_entry(s.dir, "OLD", "add_kernel");
  const FileSet before = {"OLD/add_kernel.json", "OLD/__grp__add_kernel.json", "OLD/add_kernel.cubin"};
  triton_entry(s.dir, "NEW", "mul_kernel");
  auto after = before;
  after.insert({"NEW/mul_kernel.json", "NEW/__grp__mul_kernel.json", "NEW/mul_kernel.cubin"});
  const auto usage = measure_kind("triton", s.dir, before, after, nullptr);
  EXPECT_EQ(usage.files_before, 3u);
  EXPECT_EQ(usage.new_files, 3u);
  EXPECT_FALSE(usage.reused_files.has_value());
  ASSERT_EQ(usage.new_entries.size(), 1u);
  EXPECT_EQ(usage.new_entries[0].label, "kernel mul_kernel");
  EXPECT_FALSE(usage.hit());
  EXPECT_EQ(usage.summary(), "triton: ? reused, 3 new (kernel mul_kernel)");
}

TEST(CacheUsage, WatchedReuseRewriteAndUnused)
{
  Scratch s;
  triton_entry(s.dir, "A", "a");
  triton_entry(s.dir, "B", "b");
  const FileSet files = {"A/a.json", "A/a.cubin", "B/b.json", "B/b.cubin"};
  KindAccess access;
  access.opened = {"A/a.json", "A/a.cubin", "B/b.json"};
  access.written = {"B/b.json"}; // rewritten in place: a miss (no states taken: every write counts)
  const auto usage = measure_kind("triton", s.dir, files, files, &access);
  EXPECT_EQ(usage.reused_files, 2u);
  EXPECT_EQ(usage.new_files, 1u);
  EXPECT_EQ(usage.unused_files, 1u);
  ASSERT_EQ(usage.reused_entries.size(), 1u);
  EXPECT_EQ(usage.reused_entries[0].label, "kernel a");
  ASSERT_EQ(usage.new_entries.size(), 1u);
  EXPECT_EQ(usage.new_entries[0].label, "kernel b");
}

TEST(CacheUsage, AllReusedIsAHit)
{
  Scratch s;
  const FileSet files = {"x/y"};
  KindAccess access;
  access.opened = files;
  const auto usage = measure_kind("hashcat", s.dir, files, files, &access);
  EXPECT_TRUE(usage.hit());
  EXPECT_EQ(usage.summary(), "hashcat: 1 reused, 0 new");
  KindAccess nothing;
  const auto untouched = measure_kind("hashcat", s.dir, files, files, &nothing);
  EXPECT_TRUE(untouched.untouched()) << "installed but never read: the application did not use this cache";
  EXPECT_TRUE(untouched.hit()) << "untouched is never a miss";
  EXPECT_EQ(untouched.summary(), "hashcat: untouched (1 files, none read or changed)");
}
