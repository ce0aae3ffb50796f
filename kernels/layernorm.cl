// SPDX-License-Identifier: Apache-2.0
// LayerNorm over the last dimension: one work-group per row.
//   out = (x - mean) / sqrt(var + eps) * gamma + beta    (biased variance, two passes)
// -DLOCAL_SIZE=N (power of two) must equal the launch's local size.
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
#define LOCAL_SIZE 128
#endif

acc_t work_group_sum(acc_t value, __local acc_t* scratch)
{
  const uint lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = LOCAL_SIZE / 2; stride > 0; stride >>= 1) {
    if (lid < stride) {
      scratch[lid] += scratch[lid + stride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const acc_t total = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE); // scratch is reused by the next reduction
  return total;
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void layer_norm(__global const store_t* x,
                __global const store_t* gamma,
                __global const store_t* beta,
                __global store_t* out,
                const uint cols,
                const float eps)
{
  __local acc_t scratch[LOCAL_SIZE];
  const uint lid = get_local_id(0);
  const uint base = get_group_id(0) * cols;

  acc_t sum = 0;
  for (uint c = lid; c < cols; c += LOCAL_SIZE) {
    sum += (acc_t)LOAD(x, base + c);
  }
  const acc_t mean = work_group_sum(sum, scratch) / (acc_t)cols;

  acc_t squares = 0;
  for (uint c = lid; c < cols; c += LOCAL_SIZE) {
    const acc_t d = (acc_t)LOAD(x, base + c) - mean;
    squares += d * d;
  }
  const acc_t rstd = rsqrt(work_group_sum(squares, scratch) / (acc_t)cols + eps);

  for (uint c = lid; c < cols; c += LOCAL_SIZE) {
    const real_t normalized = (real_t)(((acc_t)LOAD(x, base + c) - mean) * rstd);
    STORE(out, base + c, normalized * LOAD(gamma, c) + LOAD(beta, c));
  }
}
