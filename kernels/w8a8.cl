// SPDX-License-Identifier: Apache-2.0
// W8A8 linear layers (SmoothQuant style): int8 weights with one float scale per
// output channel, activations quantized per token at run time, int32 accumulation.
//
// quantize_per_token  x[m][:] -> q[m][:] (int8), scale[m] = max|x[m][:]| / 127,
//                     q = clamp(rint(x * (127 / max)), -127, 127); an all-zero row
//                     gets scale 1 and q = 0. One work-group per row (LOCAL_SIZE).
// w8a8_gemm           prefill: y[m][n] = (sum_k q[m][k] * w[n][k]) * a_scale[m] * w_scale[n],
//                     TILE x TILE outputs per work-group, K in TILE-wide steps through
//                     local memory. Global (round_up(N, TILE), round_up(M, TILE)).
// w8a8_gemv           decode: one work-group (LOCAL_SIZE) per output (n, m), splitting K.
//                     Global (N * LOCAL_SIZE, M).
// -DLOCAL_SIZE=N (power of two), -DTILE=T.
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
#ifndef TILE
#define TILE 16
#endif

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void quantize_per_token(__global const store_t* x,
                        __global char* q,
                        __global float* scales,
                        const uint cols)
{
  __local float partial[LOCAL_SIZE];
  const uint lid = get_local_id(0);
  const uint row = get_group_id(0);
  const uint base = row * cols;

  float peak = 0.0f;
  for (uint c = lid; c < cols; c += LOCAL_SIZE) {
    peak = fmax(peak, fabs((float)LOAD(x, base + c)));
  }
  partial[lid] = peak;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = LOCAL_SIZE / 2; stride > 0; stride >>= 1) {
    if (lid < stride) {
      partial[lid] = fmax(partial[lid], partial[lid + stride]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float row_peak = partial[0];
  const float inverse = row_peak > 0.0f ? 127.0f / row_peak : 0.0f;
  for (uint c = lid; c < cols; c += LOCAL_SIZE) {
    const float v = rint((float)LOAD(x, base + c) * inverse);
    q[base + c] = (char)clamp(v, -127.0f, 127.0f);
  }
  if (lid == 0) {
    scales[row] = row_peak > 0.0f ? row_peak / 127.0f : 1.0f;
  }
}

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void w8a8_gemm(__global const char* a,
               __global const float* a_scales,
               __global const char* w,
               __global const float* w_scales,
               __global store_t* y,
               const uint m_rows,
               const uint n_out,
               const uint k_in)
{
  __local char a_tile[TILE][TILE];
  __local char w_tile[TILE][TILE];
  const uint lx = get_local_id(0);
  const uint ly = get_local_id(1);
  const uint n = get_global_id(0);
  const uint m = get_global_id(1);
  const uint n0 = get_group_id(0) * TILE;

  int sum = 0;
  for (uint k0 = 0; k0 < k_in; k0 += TILE) {
    const uint k = k0 + lx;
    // Row ly of each tile: a's row m, w's row n0 + ly; reads run along k.
    a_tile[ly][lx] = (m < m_rows && k < k_in) ? a[m * k_in + k] : (char)0;
    w_tile[ly][lx] = (n0 + ly < n_out && k < k_in) ? w[(n0 + ly) * k_in + k] : (char)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint kk = 0; kk < TILE; ++kk) {
      sum += (int)a_tile[ly][kk] * (int)w_tile[lx][kk];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (m < m_rows && n < n_out) {
    STORE(y, m * n_out + n, (float)sum * a_scales[m] * w_scales[n]);
  }
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void w8a8_gemv(__global const char* a,
               __global const float* a_scales,
               __global const char* w,
               __global const float* w_scales,
               __global store_t* y,
               const uint n_out,
               const uint k_in)
{
  __local int partial[LOCAL_SIZE];
  const uint lid = get_local_id(0);
  const uint n = get_group_id(0);
  const uint m = get_global_id(1);

  int sum = 0;
  for (uint k = lid; k < k_in; k += LOCAL_SIZE) {
    sum += (int)a[m * k_in + k] * (int)w[n * k_in + k];
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
    STORE(y, m * n_out + n, (float)partial[0] * a_scales[m] * w_scales[n]);
  }
}
