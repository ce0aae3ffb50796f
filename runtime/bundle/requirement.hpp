// SPDX-License-Identifier: Apache-2.0
// Slice requirements ("require KEY OP VALUE" in the manifest): for which
// devices a slice's caches were made. Keys are the vocabulary of
// base/device_properties.hpp; a manifest naming any other key comes from a
// newer prewarm and is rejected (E_UNKNOWN_REQUIREMENT), never ignored.
//
// Operators:
//   ==  exact string equality
//   >=  dotted numeric version compare ("580.65.06" >= "535.0"); both sides
//   <   must be versions (digits separated by dots), else the manifest is
//       rejected (value side) or the requirement fails (device side)
//   in  VALUE is a comma list ("0x56a0,0x56a1"); the property equals one item
// A property the device does not report is "unknown" and fails every op.
#pragma once

#include "base/device_properties.hpp"
#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prewarm::bundle {

enum class RequirementOp { equal, at_least, less_than, one_of };

std::string_view to_string(RequirementOp op); // "==", ">=", "<", "in"
// Errc::verify E_MANIFEST_FORMAT for anything but the four spellings.
Result<RequirementOp> parse_requirement_op(std::string_view text);

// vendor, opencl.*, pci-id, pci-revision, nvidia.*, intel.*, level-zero.device,
// cpu.arch, cpu.isa-level, os.kernel-release, framework.<name>.
bool is_known_requirement_key(std::string_view key);

// Key known (else Errc::verify E_UNKNOWN_REQUIREMENT), op known, value a
// version for >= and <, "in" lists without empty items (else E_MANIFEST_FORMAT).
Status validate_requirement(const Requirement& requirement);

// Dotted numeric versions, component by component, missing components as 0
// ("12.0" == "12"): -1, 0 or 1. Errc::usage naming the value when either side
// is not digits separated by single dots.
Result<int> compare_versions(std::string_view left, std::string_view right);

// Why a slice requires KEY, in a few words, for `prewarm inspect` and the
// docs: what the entries depend on that the key pins ("machine code may use
// the build CPU's instructions ..."). Empty for an unknown key.
std::string_view why_required(std::string_view key);

struct RequirementCheck
{
  bool satisfied = false;
  std::string actual; // the device's value, or "unknown"
};

// Evaluates one requirement against one device. Errors only for a requirement
// that validate_requirement() rejects.
Result<RequirementCheck> check_requirement(const Requirement& requirement,
                                           const DeviceProperties& device);

struct SliceMatch
{
  bool matched = false;
  // Which device: its index in `host_devices` and a readable name
  // ("device 1 (NVIDIA H100 80GB HBM3)"); for no match, the best candidate.
  std::string device_description_index_or_name;
  std::size_t device_index = 0;
  // Empty when matched; else the first failed requirement of the device that
  // satisfied the most: `requirement nvidia.driver >= 550.0: device has 535.1`
  // or `... device has unknown`, or "this host has no devices". An input of a
  // driver cache's key is said with both values and what differing costs:
  // `intel.ip-version: host 20.1.4, slice 20.1.0 (NEO would miss every entry)
  // on device 0 (Intel(R) Arc(TM) B580 Graphics)`.
  std::string reason;
};

// The inputs of a driver cache's key that a slice holding such a cache does
// not require (its target's value was not known when it was made: no profile,
// or one marked unknown): NEO entries without intel.igc, intel.ip-version,
// pci-id or pci-revision, .cl_cache entries without intel.opencl-extensions,
// SYCL items without opencl.device (SYCL keys its items by the device name).
// Empty for a slice that records them all, or holds no such cache.
std::vector<std::string> unchecked_key_inputs(const Slice& slice);
// "key inputs not known for its target: KEY, ... (...)"; empty when none.
std::string describe_unchecked_key_inputs(const Slice& slice);

// A slice matches a host when ONE device satisfies all of its requirements
// (a slice without requirements matches any host, even one without devices).
// A requirement that fails validation (a hand-built Slice; parse() already
// rejects those) never matches and says why in `reason`.
SliceMatch match_slice(const Slice& slice, std::span<const DeviceProperties> host_devices);

} // namespace prewarm::bundle
