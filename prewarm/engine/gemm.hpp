// SPDX-License-Identifier: Apache-2.0
// Host side of kernels/gemm.cl: batched C = alpha * A * op(B) (+ R).
// Element offsets and strides are in elements of the storage type, so one
// buffer can hold many matrices (heads, sequences, a KV cache).
#pragma once

#include "base/error.hpp"
#include "engine/defines.hpp"
#include "engine/session.hpp"

namespace prewarm::engine {

enum class BLayout {
  transposed, // B stored N x K: a linear layer's weight (y = x W^T), or K in Q K^T
  plain,      // B stored K x N: V in P V
};

struct MatrixRef
{
  const DeviceBuffer* buffer = nullptr;
  int offset = 0;       // first element
  int ld = 0;           // row stride
  int batch_stride = 0; // between batches (z)
};

struct GemmArgs
{
  int m = 0, n = 0, k = 0;
  int batches = 1;
  MatrixRef a;
  MatrixRef b;
  int b_batch_group = 1; // batches z share B[z / group] (grouped-query attention)
  BLayout b_layout = BLayout::transposed;
  MatrixRef c;           // R, when given, is read with C's offset and strides
  const DeviceBuffer* residual = nullptr;
  float alpha = 1.0f;
};

// Launches gemm.cl with -DTILE=tile -DTRANSPOSE_B=0|1 plus `precision`
// (PRECISION_FP16 / COMPUTE_HALF, or nothing for fp32).
Status run_gemm(Session& session, const GemmArgs& args, const Defines& precision = {}, int tile = 16);

// The CPU reference, in double, over float host arrays with the same layout.
void reference_gemm(const GemmArgs& args,
                    const float* a,
                    const float* b,
                    float* c,
                    const float* residual);

} // namespace prewarm::engine
