// SPDX-License-Identifier: Apache-2.0
// Embedding gather: out[t][:] = table[ids[t]][:]. An id outside [0, vocab) gives a
// row of zeros (the host rejects such ids before launching; the guard only keeps a
// bad id from reading outside the table).
//   -DEMBEDDING_INT8: int8 table with one float scale per row (out = q * scale)
// Global size: (hidden, tokens).
// Precision variants, chosen by -D (prewarm/engine/ops/precision.hpp picks them):
//   (none)                           fp32 storage, fp32 compute
//   -DPRECISION_FP16                 half storage (vload_half/vstore_half), float compute:
//                                    devices without cl_khr_fp16 (NVIDIA's OpenCL, PoCL on CPU)
//   -DPRECISION_FP16 -DCOMPUTE_HALF  half storage and half compute (cl_khr_fp16)
//   -DPRECISION_BF16                 bf16 storage (ushort), float compute: any device
// Sums accumulate in float (acc_t) in every variant, as fp16 inference libraries
// do: a half accumulator keeps about 3 significant digits over a long reduction.
#include "precision_prelude.clh"
typedef float acc_t;

#if defined(EMBEDDING_INT8)
__kernel void embedding_gather(__global const int* ids,
                               __global const char* table,
                               __global const float* row_scales,
                               __global store_t* out,
                               const uint hidden,
                               const uint vocab)
#else
__kernel void embedding_gather(__global const int* ids,
                               __global const store_t* table,
                               __global store_t* out,
                               const uint hidden,
                               const uint vocab)
#endif
{
  const uint c = get_global_id(0);
  const uint token = get_global_id(1);
  if (c >= hidden) {
    return;
  }
  const int id = ids[token];
  const uint dst = token * hidden + c;
  if (id < 0 || (uint)id >= vocab) {
    STORE(out, dst, 0.0f);
    return;
  }
  const uint src = (uint)id * hidden + c;
#if defined(EMBEDDING_INT8)
  STORE(out, dst, (float)table[src] * row_scales[id]);
#else
  STORE(out, dst, LOAD(table, src));
#endif
}
