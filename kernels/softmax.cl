// SPDX-License-Identifier: Apache-2.0
// Row-wise softmax in place, one work-group of WG items per row:
//   x[r][c] = exp(scale*x[r][c] - max) / sum
// With causal != 0 the rows are attention scores of `period` queries
// against `cols` keys, the last `period` of which are the queries
// themselves: query q = r % period may see keys c <= cols - period + q;
// masked entries become 0.
// The exponentials are stored before normalising; with half storage that
// rounds them once more (within the fp16 tolerance).
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
void softmax_rows(__global store_t* x, const int rows, const int cols, const float scale,
                  const int causal, const int period)
{
  const int r = get_group_id(0);
  const int lid = get_local_id(0);
  __local float scratch[WG];
  // No early return for r >= rows (the launch has exactly `rows` groups): on
  // PoCL 3.1 (pthread CPU device) a return ahead of the barriers below made
  // the generated work-group function crash, even though it was uniform.
  __global store_t* row = x + (long)r * cols;
  const int limit = causal ? (cols - period + (r % period) + 1) : cols;

  float m = -INFINITY;
  for (int c = lid; c < limit; c += WG) {
    m = fmax(m, scale * (float)LOAD(row, c));
  }
  scratch[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) {
      scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  m = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);

  float sum = 0.0f;
  for (int c = lid; c < limit; c += WG) {
    const float e = exp(scale * (float)LOAD(row, c) - m);
    STORE(row, c, e);
    sum += e;
  }
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) {
      scratch[lid] += scratch[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float inv = 1.0f / scratch[0];
  for (int c = lid; c < cols; c += WG) {
    STORE(row, c, c < limit ? (float)LOAD(row, c) * inv : 0.0f);
  }
}
