# SPDX-License-Identifier: Apache-2.0
"""warm-demo: builds two OpenCL kernels, runs them once, checks the result
against NumPy and prints one JSON line: the device and the seconds from start
to the first checked result. Its warm-up is the application itself: `warm-demo`.
"""
import time

T0 = time.perf_counter()

import json  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pyopencl as cl  # noqa: E402

SOURCE = r"""
__kernel void scale_add(__global const float* x, __global const float* y, __global float* out, const float a)
{
  const int i = get_global_id(0);
  out[i] = a * x[i] + y[i];
}
__kernel void row_sum(const int cols, __global const float* x, __global float* out)
{
  const int r = get_global_id(0);
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += x[r * cols + c];
  out[r] = s;
}
"""


def main():
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, SOURCE).build()
    rng = np.random.default_rng(1)
    n = 256
    x = rng.standard_normal(n * n).astype(np.float32)
    y = rng.standard_normal(n * n).astype(np.float32)
    mf = cl.mem_flags
    x_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    y_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=y)
    z_buf = cl.Buffer(ctx, mf.READ_WRITE, x.nbytes)
    sums = np.empty(n, np.float32)
    sums_buf = cl.Buffer(ctx, mf.WRITE_ONLY, sums.nbytes)
    program.scale_add(queue, (n * n,), None, x_buf, y_buf, z_buf, np.float32(2.0))
    program.row_sum(queue, (n,), None, np.int32(n), z_buf, sums_buf)
    cl.enqueue_copy(queue, sums, sums_buf)
    queue.finish()
    want = (2.0 * x + y).reshape(n, n).sum(axis=1)
    if not np.allclose(sums, want, rtol=1e-4, atol=1e-3):
        print("warm-demo: wrong result", file=sys.stderr)
        return 1
    print(json.dumps({"device": ctx.devices[0].name.strip(),
                      "first_result_s": round(time.perf_counter() - T0, 4)}))
    return 0
