// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding (NeoX / Llama / Qwen "rotate half" layout), in place
// on x[tokens][heads][head_dim]; positions[t] is token t's position.
//   angle = position * inv_freq[i],  inv_freq[i] = theta^(-2i / head_dim),  i < head_dim / 2
//   x[i]        = x[i] * cos(angle) - x[i + half] * sin(angle)
//   x[i + half] = x[i + half] * cos(angle) + x[i] * sin(angle)
// inv_freq comes from the host (computed once per model, as HF transformers and
// vLLM do): OpenCL's pow may be 16 ulp off, which at position 1000 moves the angle
// by 1e-3. The angle is float in every variant: in half, position 1000 would be
// off by a quarter of a radian.
// Global size: (head_dim / 2, heads, tokens).
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

__kernel void rope(__global store_t* x,
                   __global const int* positions,
                   __global const float* inv_freq,
                   const uint heads,
                   const uint head_dim)
{
  const uint i = get_global_id(0);
  const uint head = get_global_id(1);
  const uint token = get_global_id(2);
  const uint half_dim = head_dim / 2;
  if (i >= half_dim) {
    return;
  }
  const float angle = (float)positions[token] * inv_freq[i];
  float cos_angle;
  const float sin_angle = sincos(angle, &cos_angle);

  const uint base = (token * heads + head) * head_dim;
  const real_t first = LOAD(x, base + i);
  const real_t second = LOAD(x, base + i + half_dim);
  const real_t c = (real_t)cos_angle;
  const real_t s = (real_t)sin_angle;
  STORE(x, base + i, first * c - second * s);
  STORE(x, base + i + half_dim, second * c + first * s);
}
