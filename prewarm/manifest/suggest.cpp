// SPDX-License-Identifier: Apache-2.0
#include "manifest/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace prewarm::manifest {

std::size_t
edit_distance(std::string_view a, std::string_view b)
{
  std::vector<std::size_t> previous(b.size() + 1);
  std::vector<std::size_t> current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    previous[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string>
nearest_name(std::string_view wrong, std::span<const std::string> candidates)
{
  const std::size_t limit = std::max<std::size_t>(2, wrong.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(wrong, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string
did_you_mean(std::string_view wrong, std::span<const std::string> candidates)
{
  if (auto near = nearest_name(wrong, candidates)) {
    return fmt::format(" (did you mean '{}'?)", *near);
  }
  return {};
}

} // namespace prewarm::manifest
