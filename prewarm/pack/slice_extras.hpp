// SPDX-License-Identifier: Apache-2.0
// Joining the custom caches and runtime env of everything that fills one
// slice (several jobs in `prewarm build`, several partials in `prewarm
// merge`): the union, where one name with two meanings is an error naming
// both — one slice exports one value per variable.
#pragma once

#include "base/error.hpp"
#include "pack/bundle_writer.hpp"

#include <string_view>
#include <vector>

namespace prewarm::pack {

// Adds `caches` and `environment` (from `origin`, e.g. a job id) to the
// slice. Errc::usage naming the slice, the variable or cache and `origin`
// when a name is already there with another value.
Status join_slice_extras(SliceInput& slice,
                         const std::vector<bundle::CustomCache>& caches,
                         const std::vector<bundle::EnvSetting>& environment,
                         std::string_view origin);

} // namespace prewarm::pack
