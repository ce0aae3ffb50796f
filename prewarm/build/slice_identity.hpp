// SPDX-License-Identifier: Apache-2.0
// Slices are keyed by target identity: the requirements their caches depend
// on. Jobs of one target that ran on the same device and driver share a
// slice; the id is "<target>-<first 12 hex of SHA-256 of the requirements>",
// so the same identity gets the same id on every build host (shards merge).
#pragma once

#include "base/device_properties.hpp"
#include "bundle/bundle_manifest.hpp"
#include "manifest/target_registry.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace prewarm::build {

// What a run job's caches depend on, from the device's properties:
//   cpu (PoCL):  opencl.platform-version ==, opencl.device ==, opencl.device-version ==,
//                opencl.driver ==
//   nvidia:      nvidia.driver ==, nvidia.sm ==, opencl.device ==, opencl.driver ==
//   intel (run): pci-id ==, opencl.device ==, opencl.driver ==
// plus vendor ==. A property the device did not report is left out (an absent
// key would make the requirement unsatisfiable everywhere), and so is one whose
// value the bundle grammar cannot hold (representable_value()).
std::vector<bundle::Requirement> run_requirements(const manifest::Target& target,
                                                  const DeviceProperties& device);

// A requirement VALUE per bundle/bundle_manifest.hpp: 1..1024 printable ASCII,
// no leading, trailing or double space.
bool representable_value(std::string_view value);

// Sorted, one "key op value" per line: the text the slice id hashes.
std::string canonical_requirements(std::vector<bundle::Requirement> requirements);

std::string slice_id(const std::string& target, const std::vector<bundle::Requirement>& requirements);

} // namespace prewarm::build
