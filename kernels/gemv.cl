// SPDX-License-Identifier: Apache-2.0
// GEMV for decode: y[m][n] = sum_k x[m][k] * w[n][k] (w is [out][in], as a linear
// layer stores it), for the few rows m of a decode step. One work-group of
// LOCAL_SIZE work-items per output (n, m); they split K and reduce in local memory.
// -DLOCAL_SIZE=N (power of two) must equal the launch's local size.
// Global size: (N * LOCAL_SIZE, M).
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

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void gemv(__global const store_t* x,
          __global const store_t* w,
          __global store_t* y,
          const uint n_out,
          const uint k_in)
{
  __local acc_t partial[LOCAL_SIZE];
  const uint lid = get_local_id(0);
  const uint n = get_group_id(0);
  const uint m = get_global_id(1);

  acc_t sum = 0;
  for (uint k = lid; k < k_in; k += LOCAL_SIZE) {
    sum += (acc_t)(LOAD(x, m * k_in + k) * LOAD(w, n * k_in + k));
  }
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = LOCAL_SIZE / 2; stride > 0; stride >>= 1) {
    if (lid < stride) {
      partial[lid] += partial[lid + stride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    STORE(y, m * n_out + n, partial[0]);
  }
}
