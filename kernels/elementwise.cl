// SPDX-License-Identifier: Apache-2.0
// Element-wise ops of a transformer block: residual add, SwiGLU (SiLU(gate) * up)
// and GELU (exact, erf form). One work-item per element; `n` elements.
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

__kernel void residual_add(__global const store_t* a,
                           __global const store_t* b,
                           __global store_t* out,
                           const uint n)
{
  const uint i = get_global_id(0);
  if (i >= n) {
    return;
  }
  STORE(out, i, LOAD(a, i) + LOAD(b, i));
}

// out = silu(gate) * up, silu(g) = g / (1 + exp(-g)).
__kernel void silu_mul(__global const store_t* gate,
                       __global const store_t* up,
                       __global store_t* out,
                       const uint n)
{
  const uint i = get_global_id(0);
  if (i >= n) {
    return;
  }
  const real_t g = LOAD(gate, i);
  const real_t silu = g / ((real_t)1 + exp(-g));
  STORE(out, i, silu * LOAD(up, i));
}

// out = 0.5 * x * (1 + erf(x / sqrt(2))).
__kernel void gelu(__global const store_t* x, __global store_t* out, const uint n)
{
  const uint i = get_global_id(0);
  if (i >= n) {
    return;
  }
  const real_t v = LOAD(x, i);
  STORE(out, i, (real_t)0.5f * v * ((real_t)1 + erf(v * (real_t)M_SQRT1_2_F)));
}
