// SPDX-License-Identifier: Apache-2.0
// Which slices of a verified bundle apply to this host. A slice applies when
// one host device satisfies all of its requirements (bundle::match_slice). A
// slice that does not apply is skipped with the reason; a bundle with nothing
// for this host is not an attack, it is Errc::not_applicable (exit 4).
// Requirements on keys the operator waived (install --ignore-requirement KEY)
// are not evaluated: a slice that failed only those is selected with a
// warning that names each waived requirement and what the host has (a NEO
// cache made with another IGC can only miss; the operator decides). A
// selected slice whose target's key inputs were not known says which.
#pragma once

#include "base/error.hpp"
#include "bundle/bundle_manifest.hpp"
#include "host/host_device.hpp"

#include <span>
#include <string>
#include <vector>

namespace prewarm::install {

struct SelectedSlice
{
  const bundle::Slice* slice = nullptr; // points into the manifest passed in
  std::string device;                   // the device it matched, readable
};

struct SkippedSlice
{
  std::string slice_id;
  std::string reason; // "requirement pci-id == 0x56a0: device has 0x56a5"
};

struct SliceSelection
{
  std::vector<SelectedSlice> selected; // in manifest order
  std::vector<SkippedSlice> skipped;
  // Selected only because of a waiver, or selected with inputs of its
  // driver cache's key unknown (bundle::unchecked_key_inputs).
  std::vector<std::string> warnings;
};

// Always succeeds; may select nothing.
SliceSelection evaluate_slices(const bundle::BundleManifest& manifest, std::span<const host::HostDevice> devices,
                               std::span<const std::string> waived_keys = {});

// evaluate_slices(), with "nothing selected" as Errc::not_applicable
// (E_TARGET_MISMATCH) listing every slice's reason and the host's devices.
Result<SliceSelection> select_slices(const bundle::BundleManifest& manifest, std::span<const host::HostDevice> devices,
                                     std::span<const std::string> waived_keys = {});

} // namespace prewarm::install
