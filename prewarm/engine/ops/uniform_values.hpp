// SPDX-License-Identifier: Apache-2.0
// Uniformly distributed values from a caller's generator: weights and inputs
// of the forward passes and their host references draw from one generator in
// a fixed order, so the same seed gives the same tensors everywhere.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace prewarm::engine::ops {

// `count` values uniform in [low, high).
inline std::vector<float>
uniform_values(std::mt19937& rng, std::size_t count, float low, float high)
{
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(count);
  for (float& value : values) {
    value = dist(rng);
  }
  return values;
}

} // namespace prewarm::engine::ops
