// SPDX-License-Identifier: Apache-2.0
// Slice selection never dies and always decides: every subset of a PoCL
// slice's requirements waived, against hosts with no device, the CPU alone,
// and several devices. The answer is checked against the requirements
// themselves (a slice is selected exactly when one device satisfies every
// requirement that is not waived), not against the selector's own output.
#include "install/slice_selection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace prewarm::install {
namespace {

// What a PoCL slice of a JAX, PyTensor or OpenVINO bundle required (issue 41).
bundle::Slice
pocl_slice()
{
  bundle::Slice slice;
  slice.id = "cpu-pocl";
  slice.requirements = {{"opencl.device", "==", "pthread-haswell"},
                        {"opencl.device-version", "==", "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-haswell"},
                        {"opencl.driver", "==", "6.0"},
                        {"vendor", "==", "cpu"}};
  return slice;
}

host::HostDevice
pocl_device()
{
  return {"OpenCL 0: pthread-haswell",
          {{"vendor", "cpu"},
           {"opencl.device", "pthread-haswell"},
           {"opencl.device-version", "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-haswell"},
           {"opencl.driver", "6.0"}}};
}

host::HostDevice
cpu_record()
{
  return {"CPU x86_64", {{"vendor", "cpu"}, {"cpu.arch", "x86_64"}, {"cpu.isa-level", "3"}}};
}

host::HostDevice
nvidia_gpu()
{
  return {"NVIDIA H200", {{"vendor", "nvidia"}, {"nvidia.driver", "580.65.06"}, {"nvidia.sm", "90"}}};
}

// Independent of the selector: one device satisfies every kept requirement
// by plain string equality (all of them are "==").
bool
expected_selected(const bundle::Slice& slice, const std::vector<host::HostDevice>& devices,
                  const std::vector<std::string>& waived)
{
  std::vector<bundle::Requirement> kept;
  for (const auto& r : slice.requirements) {
    if (std::ranges::find(waived, r.key) == waived.end()) {
      kept.push_back(r);
    }
  }
  if (kept.empty()) {
    return true;
  }
  return std::ranges::any_of(devices, [&](const host::HostDevice& d) {
    return std::ranges::all_of(kept, [&](const bundle::Requirement& r) {
      const auto it = d.properties.find(r.key);
      return it != d.properties.end() && it->second == r.value;
    });
  });
}

TEST(SliceSelection, EveryWaiverAgainstEveryDeviceListDecidesWithAReason)
{
  bundle::BundleManifest manifest;
  manifest.slices.push_back(pocl_slice());
  const std::vector<std::vector<host::HostDevice>> hosts = {
    {}, {cpu_record()}, {cpu_record(), nvidia_gpu(), pocl_device()}, {nvidia_gpu(), pocl_device()}};
  const auto keys = manifest.slices.front().requirements;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    for (unsigned mask = 0; mask < (1U << keys.size()); ++mask) {
      std::vector<std::string> waived;
      for (std::size_t k = 0; k < keys.size(); ++k) {
        if ((mask & (1U << k)) != 0) {
          waived.push_back(keys[k].key);
        }
      }
      SCOPED_TRACE("host " + std::to_string(h) + ", waiver mask " + std::to_string(mask));
      const auto selection = evaluate_slices(manifest, hosts[h], waived);
      const bool expected = expected_selected(manifest.slices.front(), hosts[h], waived);
      ASSERT_EQ(selection.selected.size(), expected ? 1U : 0U);
      ASSERT_EQ(selection.skipped.size(), expected ? 0U : 1U);
      if (!expected) {
        EXPECT_FALSE(selection.skipped.front().reason.empty());
        const auto result = select_slices(manifest, hosts[h], waived);
        ASSERT_FALSE(result);
        EXPECT_NE(result.error().message().find("no slice of the bundle matches"), std::string::npos);
      }
    }
  }
}

TEST(SliceSelection, AllRequirementsWaivedOnAHostWithoutDevicesNamesEachAsUnknown)
{
  bundle::BundleManifest manifest;
  manifest.slices.push_back(pocl_slice());
  const std::vector<std::string> waived = {"opencl.device", "opencl.device-version", "opencl.driver", "vendor"};
  const auto selection = evaluate_slices(manifest, {}, waived);
  ASSERT_EQ(selection.selected.size(), 1U);
  ASSERT_EQ(selection.warnings.size(), 1U);
  for (const auto& key : waived) {
    EXPECT_NE(selection.warnings.front().find(key), std::string::npos) << selection.warnings.front();
  }
  EXPECT_NE(selection.warnings.front().find("(host: unknown)"), std::string::npos) << selection.warnings.front();
}

} // namespace
} // namespace prewarm::install
