// SPDX-License-Identifier: Apache-2.0
// Variables a built-in kind adds where it is installed, beside
// cache_environment() (cache_kind.hpp): set by prewarm-runtime env/exec and
// by the builder's hit proof, which stands for them, never at the capture.
// They say how an application should use a cache that already holds its
// work. Defined with the kinds' rows in cache_kind.cpp.
#pragma once

#include "bundle/cache_kind.hpp"

#include <vector>

namespace prewarm::bundle {

// Empty for most kinds.
std::vector<EnvSetting> installed_environment(CacheKind kind);

} // namespace prewarm::bundle
