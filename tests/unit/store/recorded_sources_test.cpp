// SPDX-License-Identifier: Apache-2.0
// recorded_sources(): the OpenCL C programs the layer recorded, as the
// builder compiles them ahead of time for absent Intel targets.
#include "base/digest.hpp"
#include "base/files.hpp"
#include "store/program_record.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

namespace prewarm::store {
namespace {

ProgramKey
layer_key(std::string_view source, std::string options, std::string stage, std::string device = "pthread")
{
  ProgramKey key;
  key.source_sha256 = sha256_hex(source);
  key.options = std::move(options);
  key.platform = "Portable Computing Language";
  key.device = std::move(device);
  key.vendor = "cpu";
  key.extra = {{"layer-format", "1"}, {"stage", std::move(stage)}};
  return key;
}

class RecordedSources : public ::testing::Test
{
protected:
  void SetUp() override
  {
    auto dir = TempDir::create("test_only_recorded_sources-");
    ASSERT_TRUE(dir);
    m_dir.emplace(std::move(*dir));
  }
  const std::filesystem::path& store() const { return m_dir->path(); }

private:
  std::optional<TempDir> m_dir;
};

TEST_F(RecordedSources, ListsEachBuiltSourceWithItsOptionsOnce)
{
  const std::string a = "__kernel void a(__global int* x) { x[0] = 1; }";
  const std::string b = "__kernel void b(__global int* x) { x[0] = 2; }";
  ASSERT_TRUE(write_record(store(), layer_key(a, "-cl-fast-relaxed-math", "build"), "bin", a));
  // The same program recorded for a second device: compiled once.
  ASSERT_TRUE(write_record(store(), layer_key(a, "-cl-fast-relaxed-math", "build", "basic"), "bin", a));
  ASSERT_TRUE(write_record(store(), layer_key(a, "-DX=\"two\nlines\"", "build"), "bin", a));
  ASSERT_TRUE(write_record(store(), layer_key(b, "", "build"), "bin", b));
  auto sources = recorded_sources(store());
  ASSERT_TRUE(sources) << sources.error().message();
  ASSERT_EQ(sources->size(), 3u);
  std::vector<std::pair<std::string, std::string>> seen;
  for (const auto& s : *sources) {
    seen.emplace_back(s.source, s.options);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen[0], std::make_pair(a, std::string("-DX=\"two\nlines\""))); // the escaped newline comes back
  EXPECT_EQ(seen[1], std::make_pair(a, std::string("-cl-fast-relaxed-math")));
  EXPECT_EQ(seen[2], std::make_pair(b, std::string()));
}

TEST_F(RecordedSources, SkipsCompilesILAndSourcesTheirMetaDoesNotName)
{
  const std::string a = "int f(int x) { return x; }";
  ASSERT_TRUE(write_record(store(), layer_key(a, "", "compile"), "log", a));
  auto il = layer_key(a, "", "build");
  il.source_kind = SourceKind::il;
  ASSERT_TRUE(write_record(store(), il, "bin", a));
  // A .source that does not hash to its meta's source-sha256 (damage, or a
  // record being rewritten) is not compiled.
  const auto key = layer_key("__kernel void k() {}", "", "build");
  ASSERT_TRUE(write_record(store(), key, "bin", "__kernel void k() {}"));
  ASSERT_TRUE(write_file_atomic(record_source_path(store(), key.digest()), "__kernel void other() {}", 0644, Durability::none));
  auto sources = recorded_sources(store());
  ASSERT_TRUE(sources) << sources.error().message();
  EXPECT_TRUE(sources->empty());
}

TEST_F(RecordedSources, AnAbsentStoreIsEmpty)
{
  auto sources = recorded_sources(store() / "absent");
  ASSERT_TRUE(sources);
  EXPECT_TRUE(sources->empty());
}

} // namespace
} // namespace prewarm::store
