// SPDX-License-Identifier: Apache-2.0
#include "test_inputs.hpp"

#include "aot/ocloc.hpp"
#include "aot/toolchains.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace prewarm::manifest {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Result<TargetRegistry> parse_registry(const std::string& entry);

TEST(TargetRegistry, EmbeddedRegistryHasTheDocumentedTargets)
{
  const auto& r = testing::registry();
  const auto* a380 = r.find("arc-a380");
  ASSERT_NE(a380, nullptr);
  EXPECT_EQ(a380->vendor, Vendor::intel);
  EXPECT_EQ(a380->ocloc_device, "acm-g11");
  EXPECT_EQ(a380->pci_ids, std::vector<std::string>{"0x56a5"});
  const auto* h100 = r.find("h100");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->sm, 90);
  EXPECT_EQ(r.find("cpu")->vendor, Vendor::cpu);
  EXPECT_EQ(r.find("arc-b580")->ocloc_device, "bmg");
  EXPECT_EQ(r.find("nonexistent"), nullptr);
}

TEST(TargetRegistry, PciIdsAreUniqueAcrossTargets)
{
  // One PCI id naming two targets would make slice selection ambiguous.
  std::map<std::string, std::string> owner;
  for (const auto& t : testing::registry().targets()) {
    for (const auto& id : t.pci_ids) {
      const auto [it, inserted] = owner.emplace(id, t.name);
      EXPECT_TRUE(inserted) << id << " is listed by " << it->second << " and " << t.name;
    }
  }
}

// The registry's Intel entries against the installed ocloc (a real part):
// every device it knows must have the IP version we recorded, and the ones the
// design says 22.43 lacks (bmg, mtl-*) must be unknown to it.
TEST(TargetRegistry, IntelEntriesAgreeWithTheInstalledOcloc)
{
  auto ocloc = aot::Ocloc::locate();
  if (!ocloc) {
    GTEST_SKIP() << "no ocloc here: " << ocloc.error().message();
  }
  int checked = 0;
  for (const auto& t : testing::registry().targets()) {
    if (t.vendor != Vendor::intel) {
      continue;
    }
    auto device = ocloc->lookup_device(t.ocloc_device);
    ASSERT_TRUE(device) << device.error().message();
    if (device->known) {
      EXPECT_EQ(device->ip_version, t.ip_version) << t.name;
      ++checked;
    } else if (ocloc->driver_version() == "22.43.24595") {
      EXPECT_TRUE(t.ocloc_device == "bmg" || t.ocloc_device.starts_with("mtl") || t.ocloc_device == "arl-h" ||
                  t.ocloc_device == "lnl-m" || t.ocloc_device.starts_with("ptl"))
        << t.name << ": " << t.ocloc_device;
    }
  }
  EXPECT_GE(checked, 5);
}

// The same against the Intel root's ocloc 26.27 (./setup.sh intel-root):
// it knows every Intel target, each with the IP version recorded.
TEST(TargetRegistry, IntelEntriesAgreeWithTheIntelRootOcloc)
{
  const auto root = aot::intel_root();
  if (!aot::intel_root_complete(root)) {
    GTEST_SKIP() << "no Intel root at " << root << " (./setup.sh intel-root makes it)";
  }
  auto ocloc = aot::Ocloc::at(root / "host-bin" / "ocloc");
  ASSERT_TRUE(ocloc) << ocloc.error().message();
  EXPECT_THAT(ocloc->driver_version(), StartsWith("26.27."));
  for (const auto& t : testing::registry().targets()) {
    if (t.vendor != Vendor::intel) {
      continue;
    }
    auto device = ocloc->lookup_device(t.ocloc_device);
    ASSERT_TRUE(device) << device.error().message();
    EXPECT_TRUE(device->known) << t.name << ": " << device->reason;
    EXPECT_FALSE(t.ip_version.empty()) << t.name << ": the registry records no IP version";
    EXPECT_EQ(device->ip_version, t.ip_version) << t.name;
  }
}

TEST(TargetRegistry, SteppingsAreNamedNotLeftToAPciId)
{
  const auto& r = testing::registry();
  EXPECT_EQ(r.find("arc-a380")->pci_revision, "0x05"); // DG2-G11 B1
  EXPECT_EQ(r.find("arc-a380")->ip_version, "12.56.5");
  EXPECT_EQ(r.find("arc-a770")->pci_revision, "0x08"); // DG2-G10 C0
  EXPECT_EQ(r.find("arc-b580")->ip_version, "20.1.0");

  // A bare PCI id is what made ocloc build for dg2-g11-a0.
  auto bare = parse_registry("  a:\n    vendor: intel\n    description: x\n    ocloc_device: \"0x56a5\"\n");
  ASSERT_FALSE(bare);
  EXPECT_THAT(bare.error().message(), HasSubstr("ocloc compiles a bare PCI id for the A0 stepping"));
  auto revision = parse_registry("  a:\n    vendor: intel\n    description: x\n    ocloc_device: acm-g11\n"
                                 "    pci_revision: \"5\"\n");
  ASSERT_FALSE(revision);
  EXPECT_THAT(revision.error().message(), HasSubstr("targets.a.pci_revision: a PCI revision is \"0x\" and 2 lowercase"));
  auto on_nvidia = parse_registry("  n:\n    vendor: nvidia\n    description: x\n    sm: 90\n    pci_revision: \"0x05\"\n");
  ASSERT_FALSE(on_nvidia);
  EXPECT_THAT(on_nvidia.error().message(), HasSubstr("'pci_revision' applies to vendor intel only"));
}

Result<TargetRegistry>
parse_registry(const std::string& entry)
{
  return TargetRegistry::parse("version: 1\ntargets:\n" + entry, "reg.yaml");
}

TEST(TargetRegistry, StrictAboutVendorFieldsAndIds)
{
  auto sm_on_cpu = parse_registry("  c:\n    vendor: cpu\n    description: x\n    sm: 90\n");
  ASSERT_FALSE(sm_on_cpu);
  EXPECT_THAT(sm_on_cpu.error().message(), StartsWith("reg.yaml:6:9: targets.c.sm: 'sm' applies to vendor nvidia only"));

  auto upper = parse_registry("  g:\n    vendor: nvidia\n    description: x\n    sm: 90\n    pci_ids: [\"0x233A\"]\n");
  ASSERT_FALSE(upper);
  EXPECT_THAT(upper.error().message(), HasSubstr("targets.g.pci_ids[0]: a PCI id is \"0x\" and 4 lowercase hex digits"));

  auto no_ocloc = parse_registry("  i:\n    vendor: intel\n    description: x\n");
  ASSERT_FALSE(no_ocloc);
  EXPECT_THAT(no_ocloc.error().message(), HasSubstr("missing required key 'ocloc_device'"));

  auto vendor = parse_registry("  i:\n    vendor: intle\n    description: x\n");
  ASSERT_FALSE(vendor);
  EXPECT_THAT(vendor.error().message(), HasSubstr("did you mean 'intel'"));

  // A driver's name is recorded for one of the target's ids, on Intel only.
  const std::string intel =
    "  i:\n    vendor: intel\n    description: x\n    ocloc_device: bmg\n    pci_ids: [\"0xe20b\"]\n";
  auto named = parse_registry(intel + "    device_names: {\"0xe20b\": \"Intel(R) Arc(TM) B580 Graphics\"}\n");
  ASSERT_TRUE(named) << named.error().message();
  EXPECT_EQ(named->find("i")->device_names.at("0xe20b"), "Intel(R) Arc(TM) B580 Graphics");
  auto other_id = parse_registry(intel + "    device_names: {\"0xe20c\": \"Intel(R) Arc(TM) B570 Graphics\"}\n");
  ASSERT_FALSE(other_id);
  EXPECT_THAT(other_id.error().message(),
              HasSubstr("targets.i.device_names.0xe20c: '0xe20c' is not one of this target's pci_ids (0xe20b)"));
  auto names_on_nvidia = parse_registry("  n:\n    vendor: nvidia\n    description: x\n    sm: 90\n"
                                        "    pci_ids: [\"0x2335\"]\n    device_names: {\"0x2335\": \"H200\"}\n");
  ASSERT_FALSE(names_on_nvidia);
  EXPECT_THAT(names_on_nvidia.error().message(), HasSubstr("'device_names' applies to vendor intel only"));

  auto duplicate = parse_registry("  c:\n    vendor: cpu\n    description: x\n  c:\n    vendor: cpu\n    description: y\n");
  ASSERT_FALSE(duplicate);
  EXPECT_THAT(duplicate.error().message(), StartsWith("reg.yaml:6:3: targets.c: duplicate key 'c'"));
}

TEST(Presets, EmbeddedPresetsMatchTheirModels)
{
  const auto& p = testing::presets();
  const auto* qwen = p.find("qwen2.5-0.5b");
  ASSERT_NE(qwen, nullptr);
  const auto& d = std::get<model::DecoderArchitecture>(qwen->body);
  EXPECT_EQ(d.layers, 24);
  EXPECT_EQ(d.heads, 14);
  EXPECT_EQ(d.head_dim, 64);
  EXPECT_EQ(d.ffn, 4864);
  EXPECT_DOUBLE_EQ(d.norm_eps, 1e-6);
  const auto* lpr = p.find("lprnet");
  ASSERT_NE(lpr, nullptr);
  const auto& cnn = std::get<model::CnnArchitecture>(lpr->body);
  EXPECT_EQ(cnn.input_width, 94);
  EXPECT_EQ(cnn.input_height, 24);
  EXPECT_EQ(cnn.classes, 68);
  const auto* gptq = p.find("gptq-linear");
  ASSERT_NE(gptq, nullptr);
  const auto& g = std::get<model::GptqStackArchitecture>(gptq->body);
  EXPECT_EQ(g.group_size, 128);
  EXPECT_TRUE(g.act_order);
  ASSERT_EQ(g.layers.size(), 2u);
  EXPECT_EQ(g.layers[0].out_features, g.layers[1].in_features);
}

TEST(Presets, GptqLayersMustChain)
{
  auto bad = PresetLibrary::parse(R"(version: 1
presets:
  g:
    type: gptq
    group_size: 128
    layers:
      - {in: 256, out: 512}
      - {in: 384, out: 256}
)",
                                  "p.yaml");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(),
              StartsWith("p.yaml:8:9: presets.g.layers[1]: in (384) must equal the previous layer's out (512)"));
}

} // namespace
} // namespace prewarm::manifest
