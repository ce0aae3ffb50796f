// SPDX-License-Identifier: Apache-2.0
// RMSNorm, one work-group of WG items per row:
//   out[r][c] = x[r][c] / sqrt(mean_c(x[r][c]^2) + eps) * weight[c]
// Launch: global = (rows * WG), local = (WG).
// Precision variants (same convention as the other kernels; chosen by -D):
//   (none)                           fp32 storage, fp32 compute
//   -DPRECISION_FP16                 half storage (vload_half/vstore_half), float compute
//   -DPRECISION_FP16 -DCOMPUTE_HALF  half storage and compute (needs cl_khr_fp16)
//   -DPRECISION_BF16                 bf16 storage (ushort), float compute: any device
// Reductions accumulate in float in every variant.
#include "precision_prelude.clh"

#ifndef WG
#define WG 64
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rmsnorm(__global const store_t* x, __global const store_t* weight, __global store_t* out,
             const int rows, const int cols, const float eps)
{
  const int r = get_group_id(0);
  const int lid = get_local_id(0);
  __local float scratch[WG];
  // No early return for r >= rows (the launch has exactly `rows` groups): on
  // PoCL 3.1 (pthread CPU device) a return ahead of the barriers below made
  // the generated work-group function crash, even though it was uniform.
  __global const store_t* in_row = x + (long)r * cols;
  __global store_t* out_row = out + (long)r * cols;

  float sum = 0.0f;
  for (int c = lid; c < cols; c += WG) {
    const float v = LOAD(in_row, c);
    sum = fma(v, v, sum);
  }
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) {
      scratch[lid] += scratch[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv_rms = rsqrt(scratch[0] / (float)cols + eps);
  for (int c = lid; c < cols; c += WG) {
    STORE(out_row, c, (float)LOAD(in_row, c) * inv_rms * (float)LOAD(weight, c));
  }
}
