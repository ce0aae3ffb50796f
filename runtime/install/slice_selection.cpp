// SPDX-License-Identifier: Apache-2.0
#include "install/slice_selection.hpp"

#include "bundle/requirement.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::install {

SliceSelection
evaluate_slices(const bundle::BundleManifest& manifest, std::span<const host::HostDevice> devices,
                std::span<const std::string> waived_keys)
{
  const auto properties = host::properties_of(devices);
  SliceSelection selection;
  for (const auto& slice : manifest.slices) {
    const auto match = bundle::match_slice(slice, properties);
    if (match.matched) {
      selection.selected.push_back({&slice, match.device_description_index_or_name});
      if (const auto unchecked = bundle::describe_unchecked_key_inputs(slice); !unchecked.empty()) {
        selection.warnings.push_back(fmt::format("slice {}: {}", slice.id, unchecked));
      }
      continue;
    }
    auto waived = slice;
    std::erase_if(waived.requirements, [&](const bundle::Requirement& r) {
      return std::ranges::find(waived_keys, r.key) != waived_keys.end();
    });
    const auto waived_match = waived.requirements.size() < slice.requirements.size()
                                ? bundle::match_slice(waived, properties)
                                : bundle::SliceMatch{};
    if (!waived_match.matched) {
      selection.skipped.push_back({slice.id, match.reason});
      continue;
    }
    // The device the waived slice matched, against the waived requirements:
    // each one it fails is named, as the skip would have named the first.
    // Every requirement waived matches a host without devices: then there is
    // no device, and each requirement is compared with nothing ("unknown").
    const DeviceProperties no_device;
    const auto& device =
      waived_match.device_index < properties.size() ? properties[waived_match.device_index] : no_device;
    std::string differs;
    for (const auto& r : slice.requirements) {
      const auto check = bundle::check_requirement(r, device);
      if (check && !check->satisfied) {
        differs += fmt::format("{}{} {} {} (host: {})", differs.empty() ? "" : "; ", r.key, r.op, r.value,
                               check->actual);
      }
    }
    selection.selected.push_back({&slice, waived_match.device_description_index_or_name});
    selection.warnings.push_back(fmt::format("slice {} installed although this host differs (--ignore-requirement): "
                                             "{}; caches keyed on it can only miss",
                                             slice.id, differs));
  }
  return selection;
}

Result<SliceSelection>
select_slices(const bundle::BundleManifest& manifest, std::span<const host::HostDevice> devices,
              std::span<const std::string> waived_keys)
{
  auto selection = evaluate_slices(manifest, devices, waived_keys);
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
