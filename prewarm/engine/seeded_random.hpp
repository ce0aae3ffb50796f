// SPDX-License-Identifier: Apache-2.0
// Weights and inputs for representative inferences: seeded, so a run is
// reproducible and nothing is downloaded. The values only need to be in the
// range real activations have; the kernels' cost does not depend on them.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace prewarm::engine {

inline constexpr std::uint64_t k_workload_seed = 0x70726577'61726d31; // "prewarm1"

class SeededRandom
{
public:
  explicit SeededRandom(std::uint64_t seed = k_workload_seed) : m_engine(seed) {}

  // Uniform in [-scale, scale].
  std::vector<float> uniform(std::size_t count, float scale)
  {
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> values(count);
    for (auto& v : values) {
      v = dist(m_engine);
    }
    return values;
  }

  // Uniform in [center - spread, center + spread] (norm weights near 1).
  std::vector<float> around(std::size_t count, float center, float spread)
  {
    auto values = uniform(count, spread);
    for (auto& v : values) {
      v += center;
    }
    return values;
  }

private:
  std::mt19937_64 m_engine;
};

} // namespace prewarm::engine
