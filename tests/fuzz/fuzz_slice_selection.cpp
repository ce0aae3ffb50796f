// SPDX-License-Identifier: Apache-2.0
// Fuzz target: slice selection (install/slice_selection.hpp) over any
// requirements, host devices and waived keys. Input, one item a line:
//   slice                 starts a slice
//   require KEY OP VALUE  a requirement of the current slice (any text)
//   device                starts a host device
//   KEY=VALUE             a property of the current device
//   waive KEY             install --ignore-requirement KEY
// Invariants: no crash/UB, no exception escapes; every slice is either
// selected or skipped with a reason; select_slices() selects what
// evaluate_slices() does, or fails with E_TARGET_MISMATCH.
#include "install/slice_selection.hpp"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  using namespace prewarm;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  bundle::BundleManifest manifest;
  std::vector<host::HostDevice> devices;
  std::vector<std::string> waived;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "slice") {
      manifest.slices.emplace_back().id = "s" + std::to_string(manifest.slices.size());
    } else if (first == "require" && !manifest.slices.empty()) {
      bundle::Requirement r;
      words >> r.key >> r.op;
      std::getline(words >> std::ws, r.value);
      manifest.slices.back().requirements.push_back(r);
    } else if (first == "device") {
      devices.push_back({"device " + std::to_string(devices.size()), {}});
    } else if (first == "waive") {
      std::string key;
      std::getline(words >> std::ws, key);
      waived.push_back(key);
    } else if (const auto eq = line.find('='); eq != std::string::npos && !devices.empty()) {
      devices.back().properties.insert_or_assign(line.substr(0, eq), line.substr(eq + 1));
    }
  }
  const auto selection = install::evaluate_slices(manifest, devices, waived);
  if (selection.selected.size() + selection.skipped.size() != manifest.slices.size()) {
    std::abort();
  }
  for (const auto& skipped : selection.skipped) {
    if (skipped.reason.empty()) {
      std::abort();
    }
  }
  const auto result = install::select_slices(manifest, devices, waived);
  if (result ? result->selected.size() != selection.selected.size()
             : (!selection.selected.empty() || result.error().code() != "E_TARGET_MISMATCH")) {
    std::abort();
  }
  return 0;
}
