// SPDX-License-Identifier: Apache-2.0
#include "install/slice_selection.hpp"

#include "bundle/requirement.hpp"

#include <fmt/format.h>

namespace prewarm::install {

SliceSelection
evaluate_slices(const bundle::BundleManifest& manifest, std::span<const host::HostDevice> devices)
{
  const auto properties = host::properties_of(devices);
  SliceSelection selection;
  for (const auto& slice : manifest.slices) {
    const auto match = bundle::match_slice(slice, properties);
    if (match.matched) {
      selection.selected.push_back({&slice, match.device_description_index_or_name});
    } else {
      selection.skipped.push_back({slice.id, match.reason});
    }
  }
  return selection;
}

Result<SliceSelection>
select_slices(const bundle::BundleManifest& manifest, std::span<const host::HostDevice> devices)
{
  auto selection = evaluate_slices(manifest, devices);
  if (!selection.selected.empty()) {
    return selection;
  }
  std::string reasons;
  for (const auto& skipped : selection.skipped) {
    reasons += fmt::format("; slice {}: {}", skipped.slice_id, skipped.reason);
  }
  std::string host;
  for (const auto& device : devices) {
    host += (host.empty() ? "" : ", ") + device.description;
  }
  return fail(Errc::not_applicable,
              fmt::format("no slice of the bundle matches this host (devices: {}){}", host.empty() ? "none" : host,
                          reasons),
              "E_TARGET_MISMATCH");
}

} // namespace prewarm::install
