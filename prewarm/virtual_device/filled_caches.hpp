// SPDX-License-Identifier: Apache-2.0
// What a warm-up on the virtual device (virtual_command.hpp) left in staging,
// and the slices made of it: NEO's, SYCL's and the custom caches', each with
// what the target's card must match. The NEO slice's entries are the ones a
// card looks up (neo_card_slice.hpp), synthesized from the recording.
#pragma once

#include "base/error.hpp"
#include "bundle/cache_kind.hpp"
#include "command/custom_capture.hpp"
#include "jobs/executor.hpp"
#include "manifest/manifest.hpp"
#include "virtual_device/intel_root.hpp"
#include "virtual_device/neo_card_slice.hpp"
#include "virtual_device/virtual_command.hpp"
#include "virtual_device/virtual_device.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace prewarm::virtual_device {

// Whether the model's command names `kind`: only such kinds become slices.
bool names_kind(const manifest::ModelSpec& model, bundle::CacheKind kind);

// What the warm-up left in staging, after each kind's hygiene.
struct FilledCaches
{
  std::filesystem::path neo;
  std::filesystem::path sycl;
  std::filesystem::path custom_root; // custom/<name> below it (command/custom_capture.hpp)
  std::vector<std::string> neo_entries;
  std::vector<std::string> sycl_items;
  struct Custom
  {
    command::CustomCacheRequest request;
    std::uint64_t files = 0;
    std::uint64_t bytes = 0;
    std::string name() const { return request.name; }
  };
  std::vector<Custom> custom; // the ones that filled
  std::size_t sycl_interrupted = 0;
  // The NEO recording (no trace without a NEO entry): its traced key and the
  // entries a card looks up (neo_card_slice.hpp), staged after the proof.
  std::optional<NeoRecording> recording;

  bool empty() const { return neo_entries.empty() && sycl_items.empty() && custom.empty(); }
  std::string counts() const
  {
    return fmt::format("NEO {} entries, SYCL {} items{}", neo_entries.size(), sycl_items.size(),
                       custom.empty() ? std::string() : fmt::format(", {} custom caches", custom.size()));
  }
};

// What the card's entries are made with (neo_card_slice.hpp).
struct CardSynthesis
{
  const IntelRoot& root;
  const IntelTarget& target;
  std::filesystem::path scratch;
  unsigned jobs; // parallel compiles (--jobs)
  // The virtual device's properties (its CL_DEVICE_EXTENSIONS: what the recorded lists were made of).
  const std::function<Result<ReplayResult>()>& probe;
};

// What the fill left in staging, each kind cleaned; the NEO recording taken
// when NEO wrote an entry. An error: a custom cache that cannot be packed.
Result<FilledCaches> collect_filled(const std::string& job_id, const CommandRun& fill,
                                    const std::filesystem::path& custom_root,
                                    const std::vector<command::CustomCacheRequest>& custom,
                                    const CardSynthesis& synthesis, std::vector<std::string>& warnings);

// The slices: NEO's, SYCL's and the custom caches', each with what the
// target's card must match.
// `probe`: the virtual device's IP version and extensions, which NEO's trace
// does not print (replay_programs with no program).
Result<std::vector<jobs::JobOutput>> slices_of(const FilledCaches& filled, const manifest::ModelSpec& model,
                                               const VirtualDevice& device, const std::string& driver,
                                               const std::function<Result<ReplayResult>()>& probe);

} // namespace prewarm::virtual_device
