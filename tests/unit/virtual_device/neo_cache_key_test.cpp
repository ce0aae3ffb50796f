// SPDX-License-Identifier: Apache-2.0
// NEO's entry names recomputed from the inputs NEO traced, against the names
// NEO gave the files it wrote (tests/data/neo_key: bmg, acm-g11, mtl-h;
// OpenCL and Level Zero). The expected names are NEO's output, never ours.
#include "base/files.hpp"
#include "virtual_device/neo_cache_key.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

using namespace prewarm;
using namespace prewarm::virtual_device::neo;
namespace fs = std::filesystem;

namespace {

const fs::path k_data = fs::path(PREWARM_TEST_DATA) / "neo_key";

std::vector<std::string>
lines_of(const fs::path& file)
{
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

struct Vector
{
  const char* dir;
  const char* ip_version;
  CacheApi api;
};

class NeoNames : public ::testing::TestWithParam<Vector>
{
};

TEST_P(NeoNames, RecomputedNameAndPathAreTheOnesNeoWrote)
{
  const auto& v = GetParam();
  auto ip = IpVersion::parse(v.ip_version);
  ASSERT_TRUE(ip);
  auto entries = read_traced_entries(k_data / v.dir, *ip);
  ASSERT_TRUE(entries) << entries.error().message();
  const auto written = lines_of(k_data / v.dir / "entries");
  ASSERT_EQ(entries->size(), written.size());
  std::vector<std::string> paths;
  for (const auto& entry : *entries) {
    EXPECT_EQ(cached_file_name(entry.inputs), entry.name) << v.dir;
    paths.push_back(cached_file_path(cached_file_name(entry.inputs), v.api));
  }
  std::ranges::sort(paths);
  auto expected = written;
  std::ranges::sort(expected);
  EXPECT_EQ(paths, expected);
}

INSTANTIATE_TEST_SUITE_P(Neo2627, NeoNames,
                         ::testing::Values(Vector{"bmg-opencl", "20.1.0", CacheApi::opencl},
                                           Vector{"bmg-level-zero", "20.1.0", CacheApi::level_zero},
                                           Vector{"acm-g11-opencl", "12.56.5", CacheApi::opencl},
                                           Vector{"mtl-h-opencl", "12.71.4", CacheApi::opencl}));

TEST(NeoCacheKey, EveryHashedFieldChangesTheName)
{
  auto ip = IpVersion::parse("20.1.0");
  auto entries = read_traced_entries(k_data / "bmg-opencl", *ip);
  ASSERT_TRUE(entries && !entries->empty());
  const auto base = entries->front().inputs;
  const auto name = cached_file_name(base);
  const std::vector<std::pair<const char*, std::function<void(KeyInputs&)>>> changes = {
    {"igcRevision", [](KeyInputs& k) { k.igc_revision = "x"; }},
    {"libSize", [](KeyInputs& k) { ++k.igc_lib_size; }},
    {"libMTime", [](KeyInputs& k) { ++k.igc_lib_mtime; }},
    {"input", [](KeyInputs& k) { k.input += " "; }},
    {"options", [](KeyInputs& k) { k.options = "-cl-mad-enable"; }},
    {"internal options", [](KeyInputs& k) { k.internal_options += ",+cl_khr_pci_bus_info"; }},
    {"specIds", [](KeyInputs& k) { k.spec_ids = std::string("\x01\0\0\0", 4); }},
    {"platform.usDeviceID", [](KeyInputs& k) { k.platform.device_id ^= 1; }},
    {"platform.usRevId", [](KeyInputs& k) { k.platform.revision = 4; }},
    {"feature table", [](KeyInputs& k) { k.feature_table[7] ^= 0x10; }},
    {"workaround table", [](KeyInputs& k) { k.workaround_table[0] ^= 1; }},
    {"ipVersion", [](KeyInputs& k) { k.ip_version.revision = 4; }},
  };
  for (const auto& [field, change] : changes) {
    auto changed = base;
    change(changed);
    EXPECT_NE(cached_file_name(changed), name) << field;
    EXPECT_EQ(first_difference(base, changed), field);
  }
  EXPECT_EQ(first_difference(base, base), "");
}

TEST(NeoCacheKey, IpVersionIsNeosPacking)
{
  // research: bmg 20.1.0 = 0x05004000, mtl-h 12.71.4 = 0x0311c004 (NEO's AOT table values)
  EXPECT_EQ(IpVersion::parse("20.1.0")->value(), 0x05004000u);
  EXPECT_EQ(IpVersion::parse("12.71.4")->value(), 0x0311c004u);
  EXPECT_EQ(IpVersion::parse("12.56.5")->text(), "12.56.5");
  EXPECT_FALSE(IpVersion::parse("12.56"));
  EXPECT_FALSE(IpVersion::parse("12.56.5.1"));
  EXPECT_FALSE(IpVersion::parse("12.56.64"));
}

TEST(NeoTrace, SignedSpecBytesAndErrorsNameTheField)
{
  auto work = TempDir::create("prewarm-neo-trace-");
  ASSERT_TRUE(work);
  const auto source = k_data / "bmg-level-zero" / "c11cf3505143077d.trace";
  std::ifstream in(source);
  std::stringstream text;
  text << in.rdbuf();
  auto trace = text.str();
  // NEO prints each spec byte with %02x of a signed char.
  const auto at = trace.find("specIds=\n");
  ASSERT_NE(at, std::string::npos);
  trace.replace(at, 9, "specIds=05ffffff80ffffffff\n");
  const auto file = work->path() / "c11cf3505143077d.trace";
  ASSERT_TRUE(write_file_atomic(file, trace, 0644, Durability::none));
  fs::copy_file(k_data / "bmg-level-zero" / "c11cf3505143077d.input", work->path() / "c11cf3505143077d.input");
  auto entry = read_traced_entry(file, {20, 1, 0});
  ASSERT_TRUE(entry) << entry.error().message();
  EXPECT_EQ(entry->inputs.spec_ids, std::string("\x05\x80\xff"));

  trace.replace(trace.find("usRevId="), 9, "usRevId=x");
  ASSERT_TRUE(write_file_atomic(file, trace, 0644, Durability::none));
  auto broken = read_traced_entry(file, {20, 1, 0});
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find("platform"), std::string::npos) << broken.error().message();
  EXPECT_NE(broken.error().message().find(file.string()), std::string::npos);
}

} // namespace
