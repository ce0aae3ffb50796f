// SPDX-License-Identifier: Apache-2.0
// GPTQ-style 4-bit linear layers with act-order (desc_act) checkpoints.
//
// Weights, as GPTQ checkpoints store them (K = in_features, N = out_features):
//   qweight uint[K / 8][N]       8 nibbles per word along K: nibble j of word [r][n] is row 8r + j
//   qzeros  uint[groups][N / 8]  zero points, 8 nibbles per word along N, stored as is (no -1 offset)
//   scales  store_t[groups][N]
//   g_idx   int[K]               group of each input channel; with act-order not monotonic
// w[k][n] = (q[k][n] - zero[g_idx[k]][n]) * scale[g_idx[k]][n], y = x w.
//
// Act-order is served as exllama does: at load time the host sorts the rows of
// qweight by g_idx (perm = stable argsort(g_idx)), so that each group is
// contiguous: row k of the shuffled weights belongs to group k / group_size.
// At run time gptq_reorder_activations permutes the activation columns the same
// way (x_perm[m][k] = x[m][perm[k]]), then gptq_matmul runs on contiguous groups.
//
// gptq_reorder_activations  Global (round_up(K, LOCAL_SIZE), M).
// gptq_matmul               one work-item per output (n, m); per group: dot = sum x*q,
//                           xsum = sum x, y += scale * (dot - zero * xsum).
//                           Global (round_up(N, LOCAL_SIZE), M), local (LOCAL_SIZE, 1).
// -DLOCAL_SIZE=N. group_size must be a multiple of 8; K a multiple of 8; N a multiple of 8.
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

#ifndef LOCAL_SIZE
#define LOCAL_SIZE 64
#endif

__kernel void gptq_reorder_activations(__global const store_t* x,
                                       __global const int* perm,
                                       __global store_t* x_perm,
                                       const uint k_in)
{
  const uint k = get_global_id(0);
  const uint m = get_global_id(1);
  if (k >= k_in) {
    return;
  }
  STORE(x_perm, m * k_in + k, LOAD(x, m * k_in + (uint)perm[k]));
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void gptq_matmul(__global const store_t* x_perm,
                 __global const uint* qweight,
                 __global const store_t* scales,
                 __global const uint* qzeros,
                 __global store_t* y,
                 const uint n_out,
                 const uint k_in,
                 const uint group_size)
{
  const uint n = get_global_id(0);
  const uint m = get_global_id(1);
  if (n >= n_out) {
    return;
  }
  const uint groups = (k_in + group_size - 1) / group_size;
  const uint x_base = m * k_in;
  acc_t total = 0;
  for (uint g = 0; g < groups; ++g) {
    const real_t scale = LOAD(scales, g * n_out + n);
    const uint zero = (qzeros[g * (n_out / 8) + n / 8] >> (4 * (n % 8))) & 0xF;
    const uint k_end = min(k_in, (g + 1) * group_size);
    acc_t dot = 0;
    acc_t xsum = 0;
    for (uint k = g * group_size; k < k_end; k += 8) {
      const uint word = qweight[(k / 8) * n_out + n];
#pragma unroll
      for (uint j = 0; j < 8; ++j) {
        const real_t xv = LOAD(x_perm, x_base + k + j);
        dot += (acc_t)(xv * (real_t)((word >> (4 * j)) & 0xF));
        xsum += (acc_t)xv;
      }
    }
    total += (acc_t)scale * (dot - (acc_t)zero * xsum);
  }
  STORE(y, m * n_out + n, total);
}
