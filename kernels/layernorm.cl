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
#if defined(PRECISION_FP16)
typedef half store_t;
#if defined(COMPUTE_HALF)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half real_t;
#define LOAD(p, i) ((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = (half)(v))
#else
typedef float real_t;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half((float)(v), (i), (p))
#endif
#elif defined(PRECISION_BF16)
// bf16 is the upper half of a float: no extension needed. Loads widen exactly;
// stores round to nearest, ties to even (as engine/ops/bfloat16.cpp on the host),
// keeping NaN a NaN.
typedef ushort store_t;
typedef float real_t;
#define LOAD(p, i) as_float((uint)(p)[(i)] << 16)
#define STORE(p, i, v) ((p)[(i)] = float_to_bf16((float)(v)))
ushort float_to_bf16(const float value)
{
  const uint bits = as_uint(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return (ushort)((bits >> 16) | 0x40u);
  }
  return (ushort)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
#else
typedef float store_t;
typedef float real_t;
#define LOAD(p, i) ((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = (float)(v))
#endif
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
