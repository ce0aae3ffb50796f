// SPDX-License-Identifier: Apache-2.0
// A random GPTQ layer for a test, drawn from the test's seeded generator.
#pragma once

#include "engine/ops/gptq.hpp"

#include <random>
#include <stdexcept>

namespace prewarm::engine::ops::testing {

inline GptqWeights
random_gptq(std::mt19937& rng, std::size_t in, std::size_t out, std::size_t group_size, GroupOrder order)
{
  auto weights = random_gptq_weights(static_cast<std::uint32_t>(rng()), in, out, group_size, order);
  if (!weights) {
    throw std::runtime_error(weights.error().message());
  }
  return std::move(*weights);
}

} // namespace prewarm::engine::ops::testing
