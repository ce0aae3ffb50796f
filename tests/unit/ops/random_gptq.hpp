// SPDX-License-Identifier: Apache-2.0
// A random GPTQ layer as GPTQ's act-order produces one: channels visited in a
// random order (GPTQ's Hessian order), the i-th visited one in group i / group_size.
#pragma once

#include "engine/ops/gptq.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace prewarm::engine::ops::testing {

enum class GroupOrder { act_order, sequential };

inline GptqWeights
random_gptq(std::mt19937& rng, std::size_t in, std::size_t out, std::size_t group_size, GroupOrder order)
{
  const std::size_t groups = (in + group_size - 1) / group_size;
  std::uniform_int_distribution<int> nibble(0, 15);
  std::uniform_real_distribution<float> scale(0.005f, 0.02f);
  std::vector<std::uint8_t> q(in * out);
  std::vector<std::uint8_t> zeros(groups * out);
  std::vector<float> scales(groups * out);
  for (auto& v : q) {
    v = static_cast<std::uint8_t>(nibble(rng));
  }
  for (auto& v : zeros) {
    v = static_cast<std::uint8_t>(nibble(rng));
  }
  for (auto& v : scales) {
    v = scale(rng);
  }
  std::vector<std::int32_t> visit(in);
  std::iota(visit.begin(), visit.end(), 0);
  if (order == GroupOrder::act_order) {
    std::shuffle(visit.begin(), visit.end(), rng);
  }
  std::vector<std::int32_t> g_idx(in);
  for (std::size_t i = 0; i < in; ++i) {
    g_idx[static_cast<std::size_t>(visit[i])] = static_cast<std::int32_t>(i / group_size);
  }
  auto packed = pack_gptq(in, out, group_size, q, zeros, scales, g_idx);
  if (!packed) {
    throw std::runtime_error(packed.error().message());
  }
  return std::move(*packed);
}

} // namespace prewarm::engine::ops::testing
