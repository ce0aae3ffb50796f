#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A representative OpenCL warm-up through pyopencl: the kernels of one
transformer block (tiled GEMM, RMSNorm, row softmax, SwiGLU, RoPE) built and
run once on small shapes, each result checked against NumPy.

Run it as a prewarm command workload (manifests/examples/pyopencl.yaml): the
driver's kernel cache (PoCL here; NEO or NVIDIA's ComputeCache on GPUs) fills
while it runs, and prewarm packages it. Run it again against an installed
bundle and the first result arrives without compiling.

pyopencl keeps its own binary cache; run with PYOPENCL_NO_CACHE=1 so that what
is measured is the driver cache prewarm installs. On Debian, python3-pyopencl
belongs to /usr/bin/python3.

Prints one JSON line on stdout:
  {"device": ..., "precision": ..., "first_result_s": ..., "total_s": ..., "kernels": N}
first_result_s: from the start of this script (imports included) to the first
checked result; total_s: to the end of the last kernel.
"""
import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pyopencl as cl  # noqa: E402

# Storage type is float or half (vload_half/vstore_half are core OpenCL, so
# fp16 storage needs no cl_khr_fp16); arithmetic is float in both.
SOURCE = r"""
#if USE_HALF
  #define LOAD(p, i) vload_half((i), (p))
  #define STORE(v, p, i) vstore_half((v), (i), (p))
  typedef half store_t;
#else
  #define LOAD(p, i) ((p)[i])
  #define STORE(v, p, i) ((p)[i] = (v))
  typedef float store_t;
#endif

#define TILE 16
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void gemm(const int M, const int N, const int K,
          __global const store_t* A, __global const store_t* B, __global store_t* C)
{
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  const int row = get_global_id(1), col = get_global_id(0);
  const int lr = get_local_id(1), lc = get_local_id(0);
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[lr][lc] = (row < M && t + lc < K) ? LOAD(A, row * K + t + lc) : 0.0f;
    Bs[lr][lc] = (col < N && t + lr < K) ? LOAD(B, (t + lr) * N + col) : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc += As[lr][k] * Bs[k][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) STORE(acc, C, row * N + col);
}

__kernel void rmsnorm(const int cols, const float eps,
                      __global const store_t* x, __global const store_t* w, __global store_t* y)
{
  const int r = get_global_id(0);
  float ss = 0.0f;
  for (int c = 0; c < cols; ++c) { float v = LOAD(x, r * cols + c); ss += v * v; }
  const float scale = rsqrt(ss / cols + eps);
  for (int c = 0; c < cols; ++c) STORE(LOAD(x, r * cols + c) * scale * LOAD(w, c), y, r * cols + c);
}

__kernel void softmax_rows(const int cols, __global const store_t* x, __global store_t* y)
{
  const int r = get_global_id(0);
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmax(m, LOAD(x, r * cols + c));
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += exp(LOAD(x, r * cols + c) - m);
  for (int c = 0; c < cols; ++c) STORE(exp(LOAD(x, r * cols + c) - m) / s, y, r * cols + c);
}

__kernel void swiglu(__global const store_t* gate, __global const store_t* up, __global store_t* y)
{
  const int i = get_global_id(0);
  const float g = LOAD(gate, i);
  STORE(g / (1.0f + exp(-g)) * LOAD(up, i), y, i);
}

__kernel void rope(const int head_dim, const float theta,
                   __global const store_t* x, __global store_t* y)
{
  const int pos = get_global_id(1), i = get_global_id(0);   // i < head_dim / 2
  const float freq = pow(theta, -2.0f * i / head_dim);
  const float a = pos * freq, c = cos(a), s = sin(a);
  const float x0 = LOAD(x, pos * head_dim + i), x1 = LOAD(x, pos * head_dim + i + head_dim / 2);
  STORE(x0 * c - x1 * s, y, pos * head_dim + i);
  STORE(x0 * s + x1 * c, y, pos * head_dim + i + head_dim / 2);
}
"""


def check(name, got, want, tol):
    err = float(np.max(np.abs(got.astype(np.float32) - want)))
    if not np.isfinite(err) or err > tol:
        print(f"pyopencl_warmup: {name}: max error {err} > {tol}", file=sys.stderr)
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", choices=["fp32", "fp16"], default="fp32")
    parser.add_argument("--size", type=int, default=128, help="GEMM M=N=K and row width")
    args = parser.parse_args()
    half = args.precision == "fp16"
    np_type = np.float16 if half else np.float32
    tol = 5e-2 if half else 1e-3

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    device = ctx.devices[0]
    program = cl.Program(ctx, SOURCE).build(options=[f"-DUSE_HALF={int(half)}"])
    mf = cl.mem_flags
    rng = np.random.default_rng(7)

    def upload(a):
        return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a, np_type))

    def output(shape):
        host = np.empty(shape, np_type)
        return host, cl.Buffer(ctx, mf.WRITE_ONLY, host.nbytes)

    n = args.size
    a = rng.standard_normal((n, n)).astype(np_type)
    b = rng.standard_normal((n, n)).astype(np_type)
    c, c_buf = output((n, n))
    program.gemm(queue, (n, n), (16, 16), np.int32(n), np.int32(n), np.int32(n), upload(a), upload(b), c_buf)
    cl.enqueue_copy(queue, c, c_buf)
    queue.finish()
    check("gemm", c, a.astype(np.float32) @ b.astype(np.float32), tol * n)
    first_result = time.perf_counter() - T0

    w = rng.standard_normal(n).astype(np_type)
    y, y_buf = output((n, n))
    program.rmsnorm(queue, (n,), None, np.int32(n), np.float32(1e-6), upload(a), upload(w), y_buf)
    cl.enqueue_copy(queue, y, y_buf)
    a32 = a.astype(np.float32)
    check("rmsnorm", y, a32 / np.sqrt(np.mean(a32 * a32, axis=1, keepdims=True) + 1e-6) * w.astype(np.float32), tol)

    program.softmax_rows(queue, (n,), None, np.int32(n), upload(a), y_buf)
    cl.enqueue_copy(queue, y, y_buf)
    e = np.exp(a32 - a32.max(axis=1, keepdims=True))
    check("softmax", y, e / e.sum(axis=1, keepdims=True), tol)

    program.swiglu(queue, (n * n,), None, upload(a), upload(b), y_buf)
    cl.enqueue_copy(queue, y, y_buf)
    check("swiglu", y, a32 / (1 + np.exp(-a32)) * b.astype(np.float32), tol)

    head_dim = 64
    x = rng.standard_normal((n, head_dim)).astype(np_type)
    r, r_buf = output((n, head_dim))
    program.rope(queue, (head_dim // 2, n), None, np.int32(head_dim), np.float32(10000.0), upload(x), r_buf)
    cl.enqueue_copy(queue, r, r_buf)
    queue.finish()
    pos = np.arange(n, dtype=np.float32)[:, None]
    ang = pos * (10000.0 ** (-2.0 * np.arange(head_dim // 2, dtype=np.float32) / head_dim))
    x0, x1 = x[:, : head_dim // 2].astype(np.float32), x[:, head_dim // 2:].astype(np.float32)
    check("rope", r, np.concatenate([x0 * np.cos(ang) - x1 * np.sin(ang), x0 * np.sin(ang) + x1 * np.cos(ang)], 1),
          tol)
    total = time.perf_counter() - T0

    print(json.dumps({"device": device.name.strip(), "platform": device.platform.name.strip(),
                      "precision": args.precision, "first_result_s": round(first_result, 4),
                      "total_s": round(total, 4), "kernels": 5}))


if __name__ == "__main__":
    main()
