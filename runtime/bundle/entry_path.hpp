// SPDX-License-Identifier: Apache-2.0
// Entry paths and link targets of a slice (the PATH and TARGET rules of
// bundle_manifest.hpp): what a name may hold, which tree it belongs to, where
// a link leads, and the one spelling of a name on a manifest line and in the
// tar stream. Shared by the manifest, the tar writer, the extraction and the
// builder's check of a captured cache, so that all four judge a name alike.
#pragma once

#include "base/error.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace prewarm::bundle {

inline constexpr std::size_t k_max_path_length = 1024;
inline constexpr std::size_t k_max_path_depth = 32; // components after KIND

// One entry path ("<kind>/<rel>", or "<kind>" for the kind's own directory)
// against the PATH rule of bundle_manifest.hpp: printable UTF-8, no "."/".." or empty components,
// known kind, length and depth. Errc::verify E_PATH naming the path and the
// rule it breaks. `kind_only` allows the bare "<kind>" form (directories).
// "custom/<name>/..." needs a well-formed custom cache name (whether the
// slice declares it is validate()'s check).
enum class KindOnlyPath { allowed, refused };
Status validate_entry_path(std::string_view path,
                           KindOnlyPath kind_only,
                           std::size_t max_length = k_max_path_length,
                           std::size_t max_depth = k_max_path_depth);

// The PATH rule's size limits alone: at most `max_length` bytes, at most
// `max_depth` components after KIND ("pocl/a/b" is 2 deep). Errc::verify
// E_PATH naming the path and the limit. validate_entry_path() applies it; the
// builder applies it to a captured tree when the job ends, where the rest of
// the rule is told in its own words (jobs/staged_kind.hpp).
Status check_entry_path_limits(std::string_view path,
                               std::size_t max_length = k_max_path_length,
                               std::size_t max_depth = k_max_path_depth);

// Cache kind of an entry path ("pocl/ab/cd" -> "pocl").
std::string_view kind_of(std::string_view entry_path);

// The tree an entry path belongs to: its kind, or "custom/NAME" for a custom
// cache ("pocl/ab/cd" -> "pocl", "custom/clfft/x" -> "custom/clfft"). A link
// stays inside its tree.
std::string_view tree_of(std::string_view entry_path);

// The entry path a link at `link_path` holding `target` names, judged on the
// names alone (the TARGET rule of bundle_manifest.hpp): Errc::verify E_PATH naming the link and
// the rule it breaks when the target is empty, absolute, has an empty or "."
// component or one that is not printable UTF-8, or climbs out of the link's
// tree. Whether that entry is a file of the slice is the caller's check.
Result<std::string> resolve_link_target(std::string_view link_path, std::string_view target);

// The manifest's (and tar stream's) spelling of a path or link target, and
// back: percent-encoding, one spelling per name (bundle_manifest.hpp).
std::string encode_entry_path(std::string_view path);
std::optional<std::string> decode_entry_path(std::string_view encoded);

} // namespace prewarm::bundle
