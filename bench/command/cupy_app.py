#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A CuPy application with its own kernel cache (CUPY_CACHE_DIR, read by CuPy
itself): element-wise, reduction and raw CUDA kernels that CuPy compiles with
NVRTC at first use. Prints one JSON line: first_result_s (process start to all
results on the host), digest (sha256 of the results' bytes) and how many
cubins the cache directory holds."""
import time

STARTED = time.perf_counter()

import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

import cupy as cp  # noqa: E402

RAW = r"""
extern "C" __global__ void stencil(const float* x, float* y, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i > 0 && i < n - 1) y[i] = 0.25f * x[i - 1] + 0.5f * x[i] + 0.25f * x[i + 1];
}
"""


def main():
    n = 1 << 20
    x = cp.arange(n, dtype=cp.float32) / n
    results = []
    for k in range(6):
        scale = cp.ElementwiseKernel("float32 x, float32 a", "float32 y", f"y = sinf(x * a) + {k}.0f", f"scale{k}")
        results.append(scale(x, cp.float32(k + 1)))
    norm = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    results.append(norm(x))
    y = cp.zeros_like(x)
    cp.RawKernel(RAW, "stencil")(((n + 255) // 256,), (256,), (x, y, cp.int32(n)))
    results.append(y)
    # An integer scan: CUB's float scan adds in an order that varies from run
    # to run, which would hide whether a cached kernel changed a result.
    results.append(cp.cumsum(cp.arange(n, dtype=cp.int64) % 7))
    results.append(cp.sort(x[::-1]))
    digest = hashlib.sha256()
    digests = []
    for r in results:
        data = cp.asnumpy(r).tobytes()
        digest.update(data)
        digests.append(hashlib.sha256(data).hexdigest()[:8])
    done = time.perf_counter()
    cache = os.environ.get("CUPY_CACHE_DIR", os.path.expanduser("~/.cupy/kernel_cache"))
    cubins = sum(len([f for f in fs if f.endswith(".cubin")]) for _, _, fs in os.walk(cache))
    print(json.dumps({"app": "cupy", "first_result_s": round(done - STARTED, 3), "digest": digest.hexdigest(), "digests": digests,
                      "cubins_in_cache": cubins, "cupy": cp.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
