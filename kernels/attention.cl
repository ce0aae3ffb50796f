// SPDX-License-Identifier: Apache-2.0
// Attention with grouped-query heads (heads query heads share heads / kv_heads
// key/value heads), softmax(q k^T * scale) v, over a KV cache laid out as
// cache[batch][max_seq][kv_heads][HEAD_DIM].
//
// kv_cache_write    copies a step's new keys/values into the cache at `past`.
// attention_prefill fused causal attention for `tokens` new queries at positions
//                   past .. past + tokens - 1 (flash-attention style: key/value
//                   tiles in local memory, online softmax, no score matrix).
// attention_decode  one new query per sequence against seq_len cached keys; the
//                   work-group splits the keys, each work-item keeps an online
//                   softmax state, and the states are merged in local memory.
//
// -DHEAD_DIM=D                        head size (private arrays are sized by it)
// -DBLOCK_Q=B -DBLOCK_KV=T            prefill: queries per work-group (= local size), keys per tile
// -DDECODE_LOCAL=L (power of two)     decode: work-items per (head, sequence)
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

#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef BLOCK_Q
#define BLOCK_Q 16
#endif
#ifndef BLOCK_KV
#define BLOCK_KV 16
#endif
#ifndef DECODE_LOCAL
#define DECODE_LOCAL 32
#endif

// src[batch][tokens][kv_heads][HEAD_DIM] -> cache[batch][past + t][kv_heads][HEAD_DIM].
// Global size: (HEAD_DIM, kv_heads * tokens, batch).
__kernel void kv_cache_write(__global const store_t* src,
                             __global store_t* cache,
                             const uint tokens,
                             const uint kv_heads,
                             const uint past,
                             const uint max_seq)
{
  const uint d = get_global_id(0);
  const uint row = get_global_id(1); // token * kv_heads + kv_head
  const uint b = get_global_id(2);
  if (d >= HEAD_DIM || row >= tokens * kv_heads) {
    return;
  }
  const uint src_index = ((b * tokens * kv_heads) + row) * HEAD_DIM + d;
  const uint dst_index = ((b * max_seq + past) * kv_heads + row) * HEAD_DIM + d;
  STORE(cache, dst_index, LOAD(src, src_index));
}

// q, out: [batch][tokens][heads][HEAD_DIM]. Global size: (round_up(tokens, BLOCK_Q), heads, batch),
// local size (BLOCK_Q, 1, 1). Keys 0 .. past + tokens - 1 must be in the cache.
__kernel __attribute__((reqd_work_group_size(BLOCK_Q, 1, 1)))
void attention_prefill(__global const store_t* q,
                       __global const store_t* k_cache,
                       __global const store_t* v_cache,
                       __global store_t* out,
                       const uint tokens,
                       const uint heads,
                       const uint kv_heads,
                       const uint past,
                       const uint max_seq,
                       const float scale)
{
  __local real_t k_tile[BLOCK_KV][HEAD_DIM];
  __local real_t v_tile[BLOCK_KV][HEAD_DIM];

  const uint lid = get_local_id(0);
  const uint t = get_global_id(0);
  const uint head = get_global_id(1);
  const uint b = get_global_id(2);
  const uint kv_head = head / (heads / kv_heads);
  const bool active = t < tokens;
  const uint position = past + t; // this query sees keys 0 .. position

  real_t q_row[HEAD_DIM];
  acc_t acc[HEAD_DIM];
  const uint q_base = ((b * tokens + t) * heads + head) * HEAD_DIM;
  for (uint d = 0; d < HEAD_DIM; ++d) {
    q_row[d] = active ? LOAD(q, q_base + d) : (real_t)0;
    acc[d] = 0;
  }
  acc_t running_max = -INFINITY;
  acc_t running_sum = 0;

  // Keys up to the last position any query of this work-group needs.
  const uint group_last = min(past + tokens, past + (uint)get_group_id(0) * BLOCK_Q + BLOCK_Q);
  for (uint tile = 0; tile < group_last; tile += BLOCK_KV) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint e = lid; e < BLOCK_KV * HEAD_DIM; e += BLOCK_Q) {
      const uint j = e / HEAD_DIM;
      const uint d = e % HEAD_DIM;
      const uint key = tile + j;
      const uint index = ((b * max_seq + key) * kv_heads + kv_head) * HEAD_DIM + d;
      k_tile[j][d] = key < group_last ? LOAD(k_cache, index) : (real_t)0;
      v_tile[j][d] = key < group_last ? LOAD(v_cache, index) : (real_t)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!active) {
      continue;
    }
    for (uint j = 0; j < BLOCK_KV && tile + j <= position; ++j) {
      acc_t score = 0;
      for (uint d = 0; d < HEAD_DIM; ++d) {
        score += (acc_t)(q_row[d] * k_tile[j][d]);
      }
      score *= scale;
      const acc_t new_max = fmax(running_max, score);
      const acc_t correction = exp(running_max - new_max);
      const acc_t p = exp(score - new_max);
      running_sum = running_sum * correction + p;
      for (uint d = 0; d < HEAD_DIM; ++d) {
        acc[d] = acc[d] * correction + p * (acc_t)v_tile[j][d];
      }
      running_max = new_max;
    }
  }
  if (active) {
    const acc_t inv_sum = 1.0f / running_sum;
    for (uint d = 0; d < HEAD_DIM; ++d) {
      STORE(out, q_base + d, acc[d] * inv_sum);
    }
  }
}

// q, out: [batch][heads][HEAD_DIM]; keys 0 .. seq_len - 1 (seq_len >= 1) in the cache.
// Global size: (DECODE_LOCAL * heads, batch), local size (DECODE_LOCAL, 1).
__kernel __attribute__((reqd_work_group_size(DECODE_LOCAL, 1, 1)))
void attention_decode(__global const store_t* q,
                      __global const store_t* k_cache,
                      __global const store_t* v_cache,
                      __global store_t* out,
                      const uint heads,
                      const uint kv_heads,
                      const uint seq_len,
                      const uint max_seq,
                      const float scale)
{
  __local acc_t merge_max[DECODE_LOCAL];
  __local acc_t merge_sum[DECODE_LOCAL];
  __local acc_t merge_acc[DECODE_LOCAL][HEAD_DIM];

  const uint lid = get_local_id(0);
  const uint head = get_group_id(0);
  const uint b = get_global_id(1);
  const uint kv_head = head / (heads / kv_heads);

  real_t q_row[HEAD_DIM];
  acc_t acc[HEAD_DIM];
  const uint q_base = (b * heads + head) * HEAD_DIM;
  for (uint d = 0; d < HEAD_DIM; ++d) {
    q_row[d] = LOAD(q, q_base + d);
    acc[d] = 0;
  }
  acc_t running_max = -INFINITY;
  acc_t running_sum = 0;
  for (uint key = lid; key < seq_len; key += DECODE_LOCAL) {
    const uint k_base = ((b * max_seq + key) * kv_heads + kv_head) * HEAD_DIM;
    acc_t score = 0;
    for (uint d = 0; d < HEAD_DIM; ++d) {
      score += (acc_t)(q_row[d] * LOAD(k_cache, k_base + d));
    }
    score *= scale;
    const acc_t new_max = fmax(running_max, score);
    const acc_t correction = exp(running_max - new_max);
    const acc_t p = exp(score - new_max);
    running_sum = running_sum * correction + p;
    for (uint d = 0; d < HEAD_DIM; ++d) {
      acc[d] = acc[d] * correction + p * (acc_t)LOAD(v_cache, k_base + d);
    }
    running_max = new_max;
  }

  merge_max[lid] = running_max;
  merge_sum[lid] = running_sum;
  for (uint d = 0; d < HEAD_DIM; ++d) {
    merge_acc[lid][d] = acc[d];
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  acc_t global_max = -INFINITY;
  for (uint i = 0; i < DECODE_LOCAL; ++i) {
    global_max = fmax(global_max, merge_max[i]);
  }
  acc_t total = 0;
  for (uint i = 0; i < DECODE_LOCAL; ++i) {
    // A work-item that saw no key has max -inf and sum 0: weight exp(-inf) = 0.
    total += merge_sum[i] * exp(merge_max[i] - global_max);
  }
  for (uint d = lid; d < HEAD_DIM; d += DECODE_LOCAL) {
    acc_t value = 0;
    for (uint i = 0; i < DECODE_LOCAL; ++i) {
      value += merge_acc[i][d] * exp(merge_max[i] - global_max);
    }
    STORE(out, q_base + d, value / total);
  }
}
