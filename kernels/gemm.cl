// SPDX-License-Identifier: Apache-2.0
// Tiled GEMM with local memory, batched over get_global_id(2):
//   C[z] = alpha * A[z] * op(B[z])  (+ R[z] when use_residual)
// A is M x K (row stride lda), op(B) is K x N: with -DTRANSPOSE_B=1 B is
// stored N x K (a linear layer's weight, y = x W^T; or K for Q K^T), with
// -DTRANSPOSE_B=0 it is stored K x N (V in P V).
// Batch z reads A at a_offset + z*a_batch_stride, B at
// b_offset + (z / b_batch_group)*b_batch_stride (grouped-query attention:
// b_batch_group query heads share one K/V head) and writes C (and reads R)
// at c_offset + z*c_batch_stride.
// Launch: global = (round_up(N, TILE), round_up(M, TILE), batches), local = (TILE, TILE, 1).
// Precision variants (same convention as the other kernels; chosen by -D):
//   (none)                           fp32 storage, fp32 compute
//   -DPRECISION_FP16                 half storage (vload_half/vstore_half), float compute
//   -DPRECISION_FP16 -DCOMPUTE_HALF  half storage and compute (needs cl_khr_fp16)
//   -DPRECISION_BF16                 bf16 storage (ushort), float compute: any device
// Reductions accumulate in float in every variant.
#include "precision_prelude.clh"

#ifndef TILE
#define TILE 16
#endif
#ifndef TRANSPOSE_B
#define TRANSPOSE_B 1
#endif

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void gemm(const int M, const int N, const int K,
          __global const store_t* A, const int a_offset, const int lda, const int a_batch_stride,
          __global const store_t* B, const int b_offset, const int ldb, const int b_batch_stride,
          const int b_batch_group,
          __global store_t* C, const int c_offset, const int ldc, const int c_batch_stride,
          const float alpha,
          __global const store_t* R, const int use_residual)
{
  const int col = get_global_id(0); // n
  const int row = get_global_id(1); // m
  const int z = get_global_id(2);
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);

  __global const store_t* a = A + a_offset + z * a_batch_stride;
  __global const store_t* b = B + b_offset + (z / b_batch_group) * b_batch_stride;

  // +1 column of padding: avoids local-memory bank conflicts on GPUs.
  __local real_t a_tile[TILE][TILE + 1];
  __local real_t b_tile[TILE][TILE + 1];

  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // a_tile[ly][lx] = A[row][k0 + lx]
    const int ak = k0 + lx;
    a_tile[ly][lx] = (row < M && ak < K) ? LOAD(a, row * lda + ak) : (real_t)0;
    // b_tile[ly][lx] = op(B)[k0 + ly][col]
#if TRANSPOSE_B
    // Coalesced along K: thread lx of row ly reads B[n0 + ly][k0 + lx] and
    // stores it transposed.
    const int bn = get_group_id(0) * TILE + ly;
    const int bkk = k0 + lx;
    b_tile[lx][ly] = (bn < N && bkk < K) ? LOAD(b, bn * ldb + bkk) : (real_t)0;
#else
    const int bk = k0 + ly;
    b_tile[ly][lx] = (col < N && bk < K) ? LOAD(b, bk * ldb + col) : (real_t)0;
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TILE; ++kk) {
      acc = fma((float)a_tile[ly][kk], (float)b_tile[kk][lx], acc);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) {
    const int c_index = c_offset + z * c_batch_stride + row * ldc + col;
    float value = alpha * acc;
    if (use_residual) {
      value += (float)LOAD(R, c_index);
    }
    STORE(C, c_index, value);
  }
}
