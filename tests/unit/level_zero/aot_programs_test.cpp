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

DeviceProperties
intel_device_at(std::string pci, std::string ip, std::string driver)
{
  auto d = intel_device(std::move(pci), std::move(driver));
  d.emplace(prop::intel_ip_version, std::move(ip));
  return d;
}

AotTarget
target_of(std::string device, std::string ip, std::vector<std::string> pci_ids, std::string compiler = "26.27.039122")
{
  AotTarget t;
  t.ocloc_device = std::move(device);
  t.ip_version = std::move(ip);
  t.compiler = std::move(compiler);
  t.pci_ids = std::move(pci_ids);
  return t;
}

// The stepping (the IP version's last number) decides, where the driver
// reports it: 0x56a5 is an A380 at B1 (12.56.5) or at A0 (12.56.0).
TEST(AotPrograms, AListedTargetOfAnotherSteppingIsPassedOver)
{
  auto dir = TempDir::create("test_only_aot-");
  ASSERT_TRUE(dir);
  install(dir->path(), target_of("acm-g11", "12.56.5", {"0x56a5"}), "arc-a380", "src", "", "zebin-b1");
  auto programs = AotPrograms::open(dir->path());
  ASSERT_TRUE(programs) << programs.error().message();
  const std::string neo = "26.27.039122";
  EXPECT_NE(programs->select(intel_device_at("0x56a5", "12.56.5", neo)).target, nullptr);
  EXPECT_NE(programs->select(intel_device("0x56a5", neo)).target, nullptr); // IP not reported: by PCI id
  auto a0 = programs->select(intel_device_at("0x56a5", "12.56.0", neo));
  EXPECT_EQ(a0.target, nullptr);
  EXPECT_EQ(a0.reason, "AOT target acm-g11 matches pci-id 0x56a5 but is for IP 12.56.5 and the device is IP "
                       "12.56.0 (another stepping: its driver would not load the binary)");
}

// The driver's compatibility rules: one way only, and only for compilers
// from 24.26 (when the rules came).
TEST(AotPrograms, ACompatibleBinaryServesADeviceNoTargetLists)
{
  auto dir = TempDir::create("test_only_aot-");
  ASSERT_TRUE(dir);
  const std::string neo = "26.27.039122";
  install(dir->path(), target_of("mtl-u", "12.70.4", {"0x7d40"}), "mtl-u-igpu", "src", "", "zebin-mtl-u");
  install(dir->path(), target_of("bmg", "20.1.0", {"0xe20b"}), "arc-b580", "src", "", "zebin-bmg");
  install(dir->path(), target_of("acm-g10", "12.55.8", {"0x56a0"}), "arc-a770", "src", "", "zebin-g10");
  install(dir->path(), target_of("ptl-h", "30.0.4", {"0xb080"}), "ptl-h-igpu", "src", "", "zebin-ptl-h");
  auto programs = AotPrograms::open(dir->path());
  ASSERT_TRUE(programs) << programs.error().message();
  const auto served_by = [&](std::string pci, std::string ip) -> std::string {
    const auto selection = programs->select(intel_device_at(std::move(pci), std::move(ip), neo));
    return selection.target == nullptr ? "none: " + selection.reason : selection.target->ocloc_device;
  };
  EXPECT_EQ(served_by("0x7d55", "12.71.4"), "mtl-u");   // mtl-u-b0 loads on mtl-h-b0
  EXPECT_EQ(served_by("0x7d55", "12.71.0"), "none: no AOT target lists pci-id 0x7d55 (targets: acm-g10, bmg, mtl-u, "
                                            "ptl-h)"); // not on mtl-h-a0
  EXPECT_EQ(served_by("0xe220", "20.2.0"), "bmg");      // bmg-g21 on bmg-g31
  EXPECT_EQ(served_by("0x64a0", "20.4.4"), "bmg");      // and on lnl-b0
  EXPECT_EQ(served_by("0x56a5", "12.56.5"), "acm-g10"); // dg2-g10-c0 on dg2-g11-b1
  EXPECT_EQ(served_by("0x56b0", "12.57.0"), "acm-g10"); // and on dg2-g12-a0
  EXPECT_EQ(served_by("0xb090", "30.1.0"), "ptl-h");    // ptl-h-b0 on ptl-u
  EXPECT_EQ(served_by("0x7d40", "12.70.4"), "mtl-u");   // its own, listed
  // Level Zero spells ocloc's 26.27.039122 without the padding: one release.
  EXPECT_NE(programs->select(intel_device_at("0x7d40", "12.70.4", "26.27.39122")).target, nullptr);
  EXPECT_EQ(programs->select(intel_device_at("0x7d40", "12.70.4", "26.27.39123")).target, nullptr);
  EXPECT_EQ(unpadded_release("26.27.039122"), "26.27.39122");
  EXPECT_EQ(unpadded_release("22.43.24595"), "22.43.24595");
  EXPECT_EQ(unpadded_release("1.0.0"), "1.0.0");
  // NEO's Level Zero driver reports 1.3.<build> (measured on the real 26.27):
  // the same driver when the build matches, another when it does not.
  EXPECT_NE(programs->select(intel_device_at("0x7d40", "12.70.4", "1.3.39122")).target, nullptr);
  EXPECT_EQ(programs->select(intel_device_at("0x7d40", "12.70.4", "1.3.39123")).target, nullptr);
  EXPECT_TRUE(same_release("1.3.39122", "26.27.039122"));
  EXPECT_FALSE(same_release("1.3.39122", "1.4.39122"));
  EXPECT_FALSE(same_release("26.26.39122", "26.27.39122"));
  EXPECT_TRUE(is_level_zero_driver_version("1.3.24595"));
  EXPECT_FALSE(is_level_zero_driver_version("22.43.24595"));
  EXPECT_FALSE(is_level_zero_driver_version("unknown"));
  EXPECT_EQ(release_spellings("26.27.039122"), (std::vector<std::string>{"26.27.039122", "26.27.39122", "1.3.39122"}));
  EXPECT_EQ(release_spellings("22.43.24595"), (std::vector<std::string>{"22.43.24595", "1.3.24595"}));
  EXPECT_EQ(release_spellings("1.3.24595"), (std::vector<std::string>{"1.3.24595"}));

  // Not the reverse: an mtl-h binary is not for MTL-U.
  auto reverse = TempDir::create("test_only_aot-");
  ASSERT_TRUE(reverse);
  install(reverse->path(), target_of("mtl-h", "12.71.4", {"0x7d55"}), "mtl-igpu", "src", "", "zebin-mtl-h");
  auto mtl_h = AotPrograms::open(reverse->path());
  ASSERT_TRUE(mtl_h);
  EXPECT_EQ(mtl_h->select(intel_device_at("0x7d40", "12.70.4", neo)).target, nullptr);

  // A 22.43 zebin predates the rules: only its own IP.
  auto old = TempDir::create("test_only_aot-");
  ASSERT_TRUE(old);
  install(old->path(), target_of("acm-g10", "12.55.8", {"0x56a0"}, "22.43.24595"), "arc-a770", "src", "", "z");
  auto g10_22 = AotPrograms::open(old->path());
  ASSERT_TRUE(g10_22);
  EXPECT_EQ(g10_22->select(intel_device_at("0x56a5", "12.56.5", "22.43.24595")).target, nullptr);
  EXPECT_NE(g10_22->select(intel_device_at("0x56a0", "12.55.8", "22.43.24595")).target, nullptr);
}

// The values are NEO's own: the product-config notes of ocloc 26.27 zebins
// for acm-g11 and mtl-u, and CL_DEVICE_IP_VERSION_INTEL of its virtual DG2.
TEST(AotPrograms, IntelIpVersionIsReadAsNeoWritesIt)
{
  EXPECT_EQ(intel_ip_version_text(0x030e0005u), "12.56.5");
  EXPECT_EQ(intel_ip_version_text(0x030e0000u), "12.56.0");
  EXPECT_EQ(intel_ip_version_text(0x03118004u), "12.70.4");
  EXPECT_EQ(intel_ip_version_text(0x030dc008u), "12.55.8");
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
