// SPDX-License-Identifier: Apache-2.0
#include "pack/slice_extras.hpp"

#include "base/encoding.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace prewarm::pack {

Status
join_slice_extras(SliceInput& slice, const std::vector<bundle::CustomCache>& caches,
                  const std::vector<bundle::EnvSetting>& environment, std::string_view origin)
{
  for (const auto& cache : caches) {
    const auto same_name = std::find_if(slice.caches.begin(), slice.caches.end(),
                                        [&](const bundle::CustomCache& c) { return c.name == cache.name; });
    if (same_name == slice.caches.end()) {
      slice.caches.push_back(cache);
    } else if (same_name->variable != cache.variable) {
      return fail(Errc::usage, fmt::format("slice {}: custom cache {} is located by {} in {} but by {} in another job "
                                           "of the slice (use one variable, or another cache name)",
                                           in_quotes(slice.id), cache.name, cache.variable, origin,
                                           same_name->variable));
    }
  }
  for (const auto& setting : environment) {
    const auto same_name = std::find_if(slice.environment.begin(), slice.environment.end(),
                                        [&](const bundle::EnvSetting& s) { return s.name == setting.name; });
    if (same_name == slice.environment.end()) {
      slice.environment.push_back(setting);
    } else if (same_name->value != setting.value) {
      return fail(Errc::usage, fmt::format("slice {}: runtime_env {} is {} in {} but {} in another job of the slice "
                                           "(one slice exports one value per variable)",
                                           in_quotes(slice.id), setting.name, in_quotes(setting.value), origin,
                                           in_quotes(same_name->value)));
    }
  }
  return {};
}

} // namespace prewarm::pack
