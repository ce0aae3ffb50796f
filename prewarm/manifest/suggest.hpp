// SPDX-License-Identifier: Apache-2.0
// "Did you mean ...?" for names in manifests and on the command line.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace prewarm::manifest {

// Levenshtein distance (insert, delete, substitute; each costs 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `wrong`, if it is near enough to be a plausible
// typo (distance <= max(2, length / 3)); ties go to the earliest candidate.
std::optional<std::string> nearest_name(std::string_view wrong, std::span<const std::string> candidates);

// " (did you mean 'X'?)" or "" when nothing is near.
std::string did_you_mean(std::string_view wrong, std::span<const std::string> candidates);

} // namespace prewarm::manifest
