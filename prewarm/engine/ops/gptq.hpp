// SPDX-License-Identifier: Apache-2.0
// GPTQ-style 4-bit linear layers with act-order (kernels/gptq.cl).
//
// GptqWeights holds a layer as GPTQ checkpoints store it (K = in, N = out):
//   qweight uint32 [K / 8][N]      8 nibbles per word along K (nibble j of row r = weight row 8r + j)
//   qzeros  uint32 [groups][N / 8] 8 nibbles per word along N; zero points stored as is
//                                  (no "-1" offset of the original GPTQ format)
//   scales  float  [groups][N]     (uploaded in the op's storage format, half for fp16)
//   g_idx   int32  [K]             group of each input channel, unsorted with act-order
//   w[k][n] = (q[k][n] - zero[g_idx[k]][n]) * scale[g_idx[k]][n];  y = x w
//
// Act-order runs as exllama runs it: at load time shuffle_for_act_order() sorts
// the weight rows by g_idx (perm = stable argsort), so each group is contiguous;
// at run time GptqReorder permutes the activation columns by perm (its own
// kernel), then GptqMatmul works group by group on contiguous rows.
// Requirements (checked): K, N and group_size multiples of 8; every group but
// the last holds exactly group_size channels (what GPTQ produces).
#pragma once

#include "base/error.hpp"
#include "engine/device_buffer.hpp"
#include "engine/launch.hpp"
#include "engine/ops/gemv.hpp"
#include "engine/ops/precision.hpp"
#include "engine/session.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace prewarm::engine::ops {

struct GptqWeights
{
  std::size_t in = 0;
  std::size_t out = 0;
  std::size_t group_size = 128;
  std::vector<std::uint32_t> qweight;
  std::vector<std::uint32_t> qzeros;
  std::vector<float> scales;
  std::vector<std::int32_t> g_idx;

  std::size_t groups() const { return (in + group_size - 1) / group_size; }
  unsigned weight(std::size_t k, std::size_t n) const; // 0..15
  unsigned zero(std::size_t group, std::size_t n) const; // 0..15
};

// Packs unpacked 4-bit values: q [in][out] and zeros [groups][out], each 0..15.
Result<GptqWeights> pack_gptq(std::size_t in, std::size_t out, std::size_t group_size,
                              std::span<const std::uint8_t> q, std::span<const std::uint8_t> zeros,
                              std::span<const float> scales, std::span<const std::int32_t> g_idx);

enum class GroupOrder { act_order, sequential };

// A seeded random layer as GPTQ produces one: with act_order, input channels
// are visited in a random order (GPTQ's Hessian order) and the i-th visited one
// goes to group i / group_size; scales keep y's magnitude near x's
// (about 1 / (6 sqrt(in)), 6 being the spread of q - zero).
Result<GptqWeights> random_gptq_weights(std::uint32_t seed, std::size_t in, std::size_t out,
                                        std::size_t group_size, GroupOrder order);

struct ActOrderWeights
{
  std::vector<std::uint32_t> qweight; // rows sorted by group, packed as GptqWeights::qweight
  std::vector<std::int32_t> perm;     // activation column k of the matmul = input column perm[k]
};

// E_GPTQ_G_IDX when g_idx does not describe contiguous groups of group_size
// after sorting (out of range, or a group of the wrong size).
Result<ActOrderWeights> shuffle_for_act_order(const GptqWeights& weights);

class GptqReorder
{
public:
  // local_size only names the program: gptq_matmul's LOCAL_SIZE, so that both
  // kernels come from one build of gptq.cl (the reorder itself lets the driver pick).
  explicit GptqReorder(FloatFormat format, std::size_t local_size = 64);
  Defines defines() const;
  LaunchGeometry geometry(std::size_t rows, std::size_t in) const;
  // x_perm[m][k] = x[m][perm[k]]
  Status run(Session& session, std::size_t rows, std::size_t in, const DeviceBuffer& x,
             const DeviceBuffer& perm, const DeviceBuffer& x_perm) const;
  static std::vector<float> reference(std::size_t rows, std::size_t in, std::span<const float> x,
                                      std::span<const std::int32_t> perm);

private:
  FloatFormat m_format;
  std::size_t m_local_size;
};

class GptqMatmul
{
public:
  explicit GptqMatmul(FloatFormat format, std::size_t local_size = 64);
  Defines defines() const;
  LaunchGeometry geometry(const LinearShape& shape) const;
  // x_perm: GptqReorder's output [rows][in]; qweight: ActOrderWeights::qweight
  // (or GptqWeights::qweight when g_idx is already k / group_size); scales in
  // the op's storage format; y: [rows][out].
  Status run(Session& session, const LinearShape& shape, std::size_t group_size, const DeviceBuffer& x_perm,
             const DeviceBuffer& qweight, const DeviceBuffer& scales, const DeviceBuffer& qzeros,
             const DeviceBuffer& y) const;

private:
  FloatFormat m_format;
  std::size_t m_local_size;
};

// y = x w with w dequantized through g_idx, x in the checkpoint's column order:
// independent of the shuffle and the reorder, so it checks both.
std::vector<float> gptq_reference(std::size_t rows, std::span<const float> x, const GptqWeights& weights);

} // namespace prewarm::engine::ops
