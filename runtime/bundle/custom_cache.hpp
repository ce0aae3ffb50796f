// SPDX-License-Identifier: Apache-2.0
// Custom caches: a cache directory that no built-in kind (cache_kind.hpp)
// knows, declared by a command model with the variable that locates it
// (hashcat keeps its kernels under $XDG_CACHE_HOME/hashcat/kernels).
//
// In a slice, a custom cache is one `cache NAME VARIABLE` line
// (bundle_manifest.hpp) and a tree under the reserved kind directory
// "custom": PATH = "custom/" NAME "/" REL. Installed, it is ROOT/custom/NAME,
// and `env`/`exec` export VARIABLE=ROOT/custom/NAME. The reserved directory
// keeps custom names in their own name space: a later built-in kind can never
// collide with a cache a bundle already ships, and a trust policy can allow
// "custom" (all of them) or "custom/NAME" (one) beside the built-in kinds.
//
// NAME     := [a-z0-9][a-z0-9._-]{0,63}, not a built-in kind name, not "custom"
// VARIABLE := runtime_variable.hpp NAME rule, not denied
#pragma once

#include "base/error.hpp"

#include <string>
#include <string_view>

namespace prewarm::bundle {

// The kind directory every custom cache lives under.
inline constexpr std::string_view k_custom_kind = "custom";

struct CustomCache
{
  std::string name;     // "hashcat"
  std::string variable; // "XDG_CACHE_HOME"
  auto operator<=>(const CustomCache&) const = default;
};

// The NAME rule: Errc::verify E_MANIFEST_FORMAT for a malformed name,
// E_CUSTOM_CACHE_NAME for one that collides with a built-in kind.
Status check_custom_cache_name(std::string_view name);

// Name and variable (check_exported_variable()).
Status check_custom_cache(const CustomCache& cache);

// "custom/hashcat/kernels/x" -> "hashcat"; "" when the path is not under a
// custom cache ("pocl/..", or "custom" itself).
std::string_view custom_cache_of(std::string_view entry_path);

} // namespace prewarm::bundle
