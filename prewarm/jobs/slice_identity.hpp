// SPDX-License-Identifier: Apache-2.0
// Slices are keyed by target identity: the requirements their caches depend
// on. Jobs of one target that ran on the same device and driver share a
// slice; the id is "<target>-<first 12 hex of SHA-256 of the requirements>",
// so the same identity gets the same id on every build host (shards merge).
// The requirements themselves are made here for every executor: the
// built-in executor's run_requirements() and the command executor's
// per-kind identity (command/identity.hpp) both read device properties
// through require_values(), with the same keys for a PoCL device, so that
// caches of one device from either kind of job share a slice.
#pragma once

#include "base/device_properties.hpp"
#include "bundle/bundle_manifest.hpp"
#include "manifest/target_registry.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::jobs {

// What a run job's caches depend on, from the device's properties:
//   cpu (PoCL):  opencl.platform-version ==, opencl.device ==, opencl.device-version ==,
//                opencl.driver ==
//   nvidia:      nvidia.driver ==, nvidia.sm ==, opencl.device ==, opencl.driver ==
//   intel (run): pci-id ==, opencl.device ==, opencl.driver ==
// plus vendor ==. A property the device did not report is left out (an absent
// key would make the requirement unsatisfiable everywhere), and so is one whose
// value the bundle grammar cannot hold (representable_value()).
std::vector<bundle::Requirement> run_requirements(const manifest::Target& target, const DeviceProperties& device);

// What PoCL's cache depends on: its build (timestamp and LLVM version, in the
// platform version string), the CPU model (the device name) and versions.
std::span<const std::string_view> pocl_requirement_keys();

// A requirement VALUE per bundle/bundle_manifest.hpp: 1..1024 printable ASCII,
// no leading, trailing or double space.
bool representable_value(std::string_view value);

// One requirement on `key` over all `devices` that report it, appended to
// `out`: "==" when they agree, "in" when they differ. None when no device
// reports it (a line in `warnings`: the slice does not check it), when a
// value cannot be written in a bundle (PoCL 3.1's double-spaced platform
// version: normalising it would never equal the host's exact value, and the
// other keys still pin device and driver), or when differing values hold a
// comma (an "in" list could not separate them; a line in `warnings`).
// `what_for` names the kind or job in those lines.
void require_values(std::vector<bundle::Requirement>& out, std::vector<std::string>& warnings,
                    std::span<const DeviceProperties* const> devices, std::string_view key, std::string_view what_for);

// `intel.driver in <every spelling of the release>`: a host reports one NEO
// release through OpenCL ("26.27.039122") or, with no OpenCL ICD (SYCL and
// IPEX images), through Level Zero only ("1.3.39122"); a slice of the
// release's caches installs on either.
bundle::Requirement intel_driver_requirement(std::string_view release);

// Sorted, one "key op value" per line: the text the slice id hashes.
std::string canonical_requirements(std::vector<bundle::Requirement> requirements);

std::string slice_id(const std::string& target, const std::vector<bundle::Requirement>& requirements);

} // namespace prewarm::jobs
