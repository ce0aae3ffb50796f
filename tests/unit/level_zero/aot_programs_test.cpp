// SPDX-License-Identifier: Apache-2.0
// The AOT programs format and selection rules (no Level Zero calls).
#include "level_zero/aot_programs.hpp"

#include "base/digest.hpp"
#include "base/files.hpp"

#include <gtest/gtest.h>

namespace prewarm::level_zero {
namespace {

namespace fs = std::filesystem;

AotTarget
acm_g11()
{
  AotTarget t;
  t.ocloc_device = "acm-g11";
  t.ip_version = "12.56.5";
  t.compiler = "22.43.24595";
  t.pci_ids = {"0x56a5", "0x56a6"};
  return t;
}

DeviceProperties
intel_device(std::string pci, std::string driver = "22.43.24595")
{
  DeviceProperties d;
  d.emplace(prop::vendor, "intel");
  d.emplace(prop::pci_id, std::move(pci));
  d.emplace(prop::intel_driver, std::move(driver));
  return d;
}

// Writes a target record and one program the way prewarm/aot does.
void
install(const fs::path& programs, const AotTarget& target, std::string_view record_name, std::string_view source,
        std::string_view options, std::string_view zebin)
{
  const auto dir = programs / "aot" / target.ocloc_device;
  fs::create_directories(dir);
  ASSERT_TRUE(write_file_atomic(dir / ("target." + std::string(record_name)), target.to_text()));
  const auto key = AotProgramKey::for_target(target, source, options);
  ASSERT_TRUE(write_file_atomic(dir / (key.digest() + ".zebin"), zebin));
  ASSERT_TRUE(write_file_atomic(dir / (key.digest() + ".spv"), "test_only spirv"));
  ASSERT_TRUE(write_file_atomic(dir / (key.digest() + ".meta"), key.canonical_text()));
}

TEST(AotTarget, RoundTrip)
{
  const auto text = acm_g11().to_text();
  EXPECT_EQ(text, "format 1\nvendor intel\nocloc-device acm-g11\nip-version 12.56.5\ncompiler 22.43.24595\n"
                  "pci-ids 0x56a5,0x56a6\n");
  auto parsed = AotTarget::parse(text);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->ocloc_device, "acm-g11");
  EXPECT_EQ(parsed->pci_ids, (std::vector<std::string>{"0x56a5", "0x56a6"}));
}

TEST(AotTarget, StrictParse)
{
  const std::string good = acm_g11().to_text();
  const std::string cases[] = {
    good.substr(0, good.size() - 1),                          // no final newline
    good + "extra line\n",                                    // extra line
    "format 2" + good.substr(8),                              // unknown format
    std::string("format 1\nvendor nvidia\n") + good.substr(good.find("ocloc-device")), // vendor
    std::string("format 1\nvendor intel\nip-version 1\n"),    // out of order / missing
  };
  for (const auto& text : cases) {
    auto parsed = AotTarget::parse(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().code(), "E_AOT_TARGET") << text;
  }
}

TEST(AotProgramKey, EveryComponentChangesTheKey)
{
  const auto base = AotProgramKey::for_target(acm_g11(), "src", "-DTILE=16");
  const auto reference = base.digest();
  auto changed = [&](auto mutate) {
    auto k = base;
    mutate(k);
    return k.digest();
  };
  EXPECT_NE(reference, changed([](AotProgramKey& k) { k.source_sha256 = sha256_hex("other"); }));
  EXPECT_NE(reference, changed([](AotProgramKey& k) { k.options = "-DTILE=8"; }));
  EXPECT_NE(reference, changed([](AotProgramKey& k) { k.ocloc_device = "acm-g10"; }));
  EXPECT_NE(reference, changed([](AotProgramKey& k) { k.ip_version = "12.56.4"; }));
  EXPECT_NE(reference, changed([](AotProgramKey& k) { k.compiler = "23.05.1"; }));
  // A newline in a value cannot forge a line.
  EXPECT_NE(changed([](AotProgramKey& k) { k.options = "a\ncompiler x"; }),
            changed([](AotProgramKey& k) { k.options = "a"; k.compiler = "x"; }));
}

TEST(AotPrograms, SelectsByPciIdAndDriver)
{
  auto dir = TempDir::create("test_only_aot-");
  ASSERT_TRUE(dir);
  install(dir->path(), acm_g11(), "arc-a380", "src", "", "zebin-g11");
  AotTarget g10 = acm_g11();
  g10.ocloc_device = "acm-g10";
  g10.ip_version = "12.55.8";
  g10.pci_ids = {"0x56a0"};
  install(dir->path(), g10, "arc-a770", "src", "", "zebin-g10");
  auto programs = AotPrograms::open(dir->path());
  ASSERT_TRUE(programs) << programs.error().message();
  ASSERT_EQ(programs->targets().size(), 2u);

  auto a380 = programs->select(intel_device("0x56a5"));
  ASSERT_NE(a380.target, nullptr) << a380.reason;
  EXPECT_EQ(a380.target->ocloc_device, "acm-g11");
  auto a770 = programs->select(intel_device("0x56a0"));
  ASSERT_NE(a770.target, nullptr);
  EXPECT_EQ(a770.target->ocloc_device, "acm-g10");

  auto unknown = programs->select(intel_device("0xe20b"));
  EXPECT_EQ(unknown.target, nullptr);
  EXPECT_NE(unknown.reason.find("0xe20b"), std::string::npos) << unknown.reason;

  auto other_driver = programs->select(intel_device("0x56a5", "23.05.25593"));
  EXPECT_EQ(other_driver.target, nullptr);
  EXPECT_NE(other_driver.reason.find("23.05.25593"), std::string::npos) << other_driver.reason;

  DeviceProperties nvidia{{"vendor", "nvidia"}, {"pci-id", "0x56a5"}};
  EXPECT_EQ(programs->select(nvidia).target, nullptr);
}

TEST(AotPrograms, FindHitMissAndMetaMismatch)
{
  auto dir = TempDir::create("test_only_aot-");
  ASSERT_TRUE(dir);
  install(dir->path(), acm_g11(), "arc-a380", "src", "-DTILE=16", "zebin-bytes");
  auto programs = AotPrograms::open(dir->path());
  ASSERT_TRUE(programs);
  const auto& target = programs->targets().at(0);

  auto hit = programs->find(target, "src", "-DTILE=16");
  ASSERT_TRUE(hit.program) << hit.reason;
  EXPECT_EQ(hit.program->zebin, "zebin-bytes");
  EXPECT_EQ(hit.program->spirv, "test_only spirv");

  auto miss = programs->find(target, "src", "-DTILE=8");
  EXPECT_FALSE(miss.program);
  EXPECT_NE(miss.reason.find("-DTILE=8"), std::string::npos) << miss.reason;

  const auto key = AotProgramKey::for_target(target, "src", "-DTILE=16").digest();
  ASSERT_TRUE(write_file_atomic(target.dir / (key + ".meta"), "format 1\ntampered\n"));
  auto tampered = programs->find(target, "src", "-DTILE=16");
  EXPECT_FALSE(tampered.program);
  EXPECT_NE(tampered.reason.find("meta"), std::string::npos);
}

TEST(AotPrograms, TwoRecordsShareOneDirectory)
{
  auto dir = TempDir::create("test_only_aot-");
  ASSERT_TRUE(dir);
  install(dir->path(), acm_g11(), "arc-a380", "src", "", "z");
  AotTarget a310 = acm_g11();
  a310.pci_ids = {"0x56a6"};
  install(dir->path(), a310, "arc-a310", "src", "", "z");
  auto programs = AotPrograms::open(dir->path());
  ASSERT_TRUE(programs);
  EXPECT_EQ(programs->targets().size(), 2u);
  EXPECT_NE(programs->select(intel_device("0x56a6")).target, nullptr);
}

TEST(AotPrograms, RecordInTheWrongDirectoryIsRejected)
{
  auto dir = TempDir::create("test_only_aot-");
  ASSERT_TRUE(dir);
  fs::create_directories(dir->path() / "aot" / "tgllp");
  ASSERT_TRUE(write_file_atomic(dir->path() / "aot" / "tgllp" / "target.x", acm_g11().to_text()));
  auto programs = AotPrograms::open(dir->path());
  ASSERT_FALSE(programs);
  EXPECT_EQ(programs.error().code(), "E_AOT_TARGET");
}

TEST(AotPrograms, AbsentDirectoryIsEmpty)
{
  auto programs = AotPrograms::open("/nonexistent/test_only");
  ASSERT_TRUE(programs);
  EXPECT_TRUE(programs->targets().empty());
  EXPECT_EQ(programs->select(intel_device("0x56a5")).target, nullptr);
}

} // namespace
} // namespace prewarm::level_zero
