// SPDX-License-Identifier: Apache-2.0
#include "virtual_device/filled_caches.hpp"

#include "base/files.hpp"
#include "jobs/slice_identity.hpp"
#include "jobs/staged_kind.hpp"

#include <fmt/ranges.h>

#include <algorithm>

namespace prewarm::virtual_device {

namespace fs = std::filesystem;


bool
names_kind(const manifest::ModelSpec& model, bundle::CacheKind kind)
{
  return model.command && std::ranges::find(model.command->kinds, kind) != model.command->kinds.end();
}

Result<FilledCaches>
collect_filled(const std::string& job_id, const CommandRun& fill, const fs::path& custom_root,
               const std::vector<command::CustomCacheRequest>& custom, const CardSynthesis& synthesis,
               std::vector<std::string>& warnings)
{
  FilledCaches filled;
  filled.neo = fill.neo_cache;
  filled.sycl = fill.sycl_cache;
  filled.custom_root = custom_root;
  filled.sycl_interrupted = drop_interrupted_sycl_items(fill.sycl_cache);
  filled.neo_entries = neo_cache_entries(fill.neo_cache);
  filled.sycl_items = sycl_cache_items(fill.sycl_cache);
  std::vector<std::string> refusals;
  PW_ASSIGN(auto captures, command::collect_custom_caches(custom_root, custom, warnings, refusals));
  if (!refusals.empty()) {
    return fail(Errc::failed, fmt::format("{}: the custom caches cannot be packed: {}", job_id,
                                          fmt::join(refusals, "; ")),
                "E_VIRTUAL_DEVICE");
  }
  for (const auto& capture : captures) {
    const auto request = std::ranges::find(custom, capture.name, &command::CustomCacheRequest::name);
    if (capture.files > 0 && request != custom.end()) {
      filled.custom.push_back({*request, capture.files, capture.bytes});
    } else {
      // Empty (collect_custom_caches warned): not part of the slice.
      PW_TRY(remove_tree(command::custom_staging_dir(custom_root, capture.name)));
    }
  }
  if (!filled.neo_entries.empty()) {
    PW_ASSIGN(const auto probed, synthesis.probe());
    PW_ASSIGN(auto recording, NeoRecording::take({synthesis.root, synthesis.target, probed.extensions, fill.neo_cache,
                                                  synthesis.scratch, synthesis.jobs}));
    filled.recording.emplace(std::move(recording));
  } else {
    PW_TRY(jobs::clean_staged_kind(bundle::CacheKind::neo, fill.neo_cache));
  }
  PW_TRY(jobs::clean_staged_kind(bundle::CacheKind::sycl, fill.sycl_cache));
  return filled;
}

Result<std::vector<jobs::JobOutput>>
slices_of(const FilledCaches& filled, const manifest::ModelSpec& model, const VirtualDevice& device,
          const std::string& driver, const std::function<Result<ReplayResult>()>& probe)
{
  std::vector<jobs::JobOutput> outputs;
  if (names_kind(model, bundle::CacheKind::neo) && filled.recording) {
    jobs::JobOutput neo;
    neo.staging_dir = filled.neo.parent_path();
    PW_ASSIGN(const auto probed, probe());
    const bool opencl =
      std::ranges::any_of(filled.neo_entries, [](const auto& e) { return e.ends_with(".cl_cache"); });
    PW_ASSIGN(neo.requirements,
              filled.recording->requirements(driver, probed, opencl ? OpenclEntries::present : OpenclEntries::absent));
    outputs.push_back(std::move(neo));
  }
  // SYCL's own key holds the device name and the driver version: the device
  // name is what a host's probe reports (opencl.device).
  std::vector<bundle::Requirement> device_requirements = {
    jobs::intel_driver_requirement(driver),
    {"pci-id", "==", device.pci_id},
    {"vendor", "==", "intel"},
  };
  if (!device.device_name.empty()) {
    device_requirements.push_back({"opencl.device", "==", device.device_name});
  }
  std::ranges::sort(device_requirements);
  if (names_kind(model, bundle::CacheKind::sycl) && !filled.sycl_items.empty()) {
    outputs.push_back({filled.sycl.parent_path(), device_requirements});
  }
  if (!filled.custom.empty()) {
    // A custom cache's format is the program's own: what it compiled there
    // was for this device and driver (custom_capture.hpp), as SYCL's items,
    // unless its application's row says it holds nothing for the device.
    jobs::JobOutput custom{filled.custom_root, {}};
    std::vector<command::CustomCacheRequest> requests;
    for (const auto& c : filled.custom) {
      custom.caches.push_back(bundle::CustomCache{c.request.name, c.request.variable, c.request.flag});
      requests.push_back(c.request);
    }
    if (command::custom_caches_need_opencl_device(requests)) {
      custom.requirements = device_requirements;
    }
    outputs.push_back(std::move(custom));
  }
  return outputs;
}

} // namespace prewarm::virtual_device
