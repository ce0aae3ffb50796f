// SPDX-License-Identifier: Apache-2.0
// A small CNN's ops (LPRNet style), NCHW layout.
// conv2d_bias_act  direct convolution, weights [out_c][in_c][KERNEL_SIZE][KERNEL_SIZE]
//                  with batch-norm already folded into weights and bias (the host
//                  does it once, at load time), + ReLU with -DFUSE_RELU.
//                  Global size: (round_up(out_w, TILE_X), round_up(out_h, TILE_Y), batch * out_c),
//                  local size (TILE_X, TILE_Y, 1).
// conv2d_w8a8      the same convolution in int8 (W8A8): int8 input quantized per
//                  image (w8a8.cl's quantize_per_token with one row per image),
//                  int8 weights with one scale per output channel, int32 sums;
//                  out = sum * in_scale[n] * w_scale[oc] + bias[oc] (+ ReLU).
//                  Same geometry as conv2d_bias_act.
// max_pool2d       window = stride = `pool`, floor division of the size.
//                  Global size: (round_up(out_w, TILE_X), round_up(out_h, TILE_Y), batch * channels).
// -DKERNEL_SIZE=K (the loops over the window unroll), -DFUSE_RELU.
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

#ifndef KERNEL_SIZE
#define KERNEL_SIZE 3
#endif

__kernel void conv2d_bias_act(__global const store_t* input,
                              __global const store_t* weights,
                              __global const store_t* bias,
                              __global store_t* output,
                              const uint in_c,
                              const uint in_h,
                              const uint in_w,
                              const uint out_c,
                              const uint out_h,
                              const uint out_w,
                              const uint stride,
                              const uint padding)
{
  const uint ox = get_global_id(0);
  const uint oy = get_global_id(1);
  const uint plane = get_global_id(2); // n * out_c + oc
  if (ox >= out_w || oy >= out_h) {
    return;
  }
  const uint n = plane / out_c;
  const uint oc = plane % out_c;
  const int x0 = (int)(ox * stride) - (int)padding;
  const int y0 = (int)(oy * stride) - (int)padding;

  acc_t sum = (acc_t)LOAD(bias, oc);
  for (uint ic = 0; ic < in_c; ++ic) {
    const uint in_base = (n * in_c + ic) * in_h * in_w;
    const uint w_base = (oc * in_c + ic) * KERNEL_SIZE * KERNEL_SIZE;
#pragma unroll
    for (int ky = 0; ky < KERNEL_SIZE; ++ky) {
      const int y = y0 + ky;
      if (y < 0 || y >= (int)in_h) {
        continue;
      }
#pragma unroll
      for (int kx = 0; kx < KERNEL_SIZE; ++kx) {
        const int x = x0 + kx;
        if (x < 0 || x >= (int)in_w) {
          continue;
        }
        sum += (acc_t)(LOAD(input, in_base + (uint)y * in_w + (uint)x) *
                       LOAD(weights, w_base + (uint)(ky * KERNEL_SIZE + kx)));
      }
    }
  }
#if defined(FUSE_RELU)
  sum = fmax(sum, 0.0f);
#endif
  STORE(output, (plane * out_h + oy) * out_w + ox, sum);
}

__kernel void conv2d_w8a8(__global const char* input,
                          __global const float* in_scales,
                          __global const char* weights,
                          __global const float* w_scales,
                          __global const store_t* bias,
                          __global store_t* output,
                          const uint in_c,
                          const uint in_h,
                          const uint in_w,
                          const uint out_c,
                          const uint out_h,
                          const uint out_w,
                          const uint stride,
                          const uint padding)
{
  const uint ox = get_global_id(0);
  const uint oy = get_global_id(1);
  const uint plane = get_global_id(2); // n * out_c + oc
  if (ox >= out_w || oy >= out_h) {
    return;
  }
  const uint n = plane / out_c;
  const uint oc = plane % out_c;
  const int x0 = (int)(ox * stride) - (int)padding;
  const int y0 = (int)(oy * stride) - (int)padding;

  int sum = 0;
  for (uint ic = 0; ic < in_c; ++ic) {
    const uint in_base = (n * in_c + ic) * in_h * in_w;
    const uint w_base = (oc * in_c + ic) * KERNEL_SIZE * KERNEL_SIZE;
#pragma unroll
    for (int ky = 0; ky < KERNEL_SIZE; ++ky) {
      const int y = y0 + ky;
      if (y < 0 || y >= (int)in_h) {
        continue;
      }
#pragma unroll
      for (int kx = 0; kx < KERNEL_SIZE; ++kx) {
        const int x = x0 + kx;
        if (x < 0 || x >= (int)in_w) {
          continue;
        }
        sum += (int)input[in_base + (uint)y * in_w + (uint)x] * (int)weights[w_base + (uint)(ky * KERNEL_SIZE + kx)];
      }
    }
  }
  acc_t value = (acc_t)sum * in_scales[n] * w_scales[oc] + (acc_t)LOAD(bias, oc);
#if defined(FUSE_RELU)
  value = fmax(value, 0.0f);
#endif
  STORE(output, (plane * out_h + oy) * out_w + ox, value);
}

__kernel void max_pool2d(__global const store_t* input,
                         __global store_t* output,
                         const uint in_h,
                         const uint in_w,
                         const uint out_h,
                         const uint out_w,
                         const uint pool)
{
  const uint ox = get_global_id(0);
  const uint oy = get_global_id(1);
  const uint plane = get_global_id(2); // n * channels + c
  if (ox >= out_w || oy >= out_h) {
    return;
  }
  const uint in_base = plane * in_h * in_w;
  real_t best = LOAD(input, in_base + (oy * pool) * in_w + ox * pool);
  for (uint dy = 0; dy < pool; ++dy) {
    for (uint dx = 0; dx < pool; ++dx) {
      best = fmax(best, LOAD(input, in_base + (oy * pool + dy) * in_w + ox * pool + dx));
    }
  }
  STORE(output, (plane * out_h + oy) * out_w + ox, best);
}
