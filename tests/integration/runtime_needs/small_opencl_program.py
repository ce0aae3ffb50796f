#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# A small OpenCL application (pyopencl): builds one program, runs it, checks
# the result on the host and prints one JSON line. Exit 1 when the build or
# the result fails, so "it ran" is never mistaken for "it worked".
import json
import sys
import time

import numpy as np
import pyopencl as cl

SOURCE = """
__kernel void saxpy(__global const float* x, __global float* y, const float a) {
  const size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
__kernel void square(__global float* y) {
  const size_t i = get_global_id(0);
  y[i] = y[i] * y[i];
}
"""

started = time.perf_counter()
context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
n = 4096
x = np.arange(n, dtype=np.float32)
y = np.ones(n, dtype=np.float32)
flags = cl.mem_flags
x_buf = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
y_buf = cl.Buffer(context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=y)
try:
    program = cl.Program(context, SOURCE).build()
except cl.Error as error:
    print(json.dumps({"ok": False, "error": str(error)[:400]}))
    sys.exit(1)
program.saxpy(queue, (n,), (64,), x_buf, y_buf, np.float32(2.0))
program.square(queue, (n,), (64,), y_buf)
result = np.empty_like(y)
cl.enqueue_copy(queue, result, y_buf)
queue.finish()
expected = (2.0 * x + 1.0) ** 2
ok = bool(np.allclose(result, expected))
print(json.dumps({"ok": ok, "device": context.devices[0].name, "seconds": round(time.perf_counter() - started, 3)}))
sys.exit(0 if ok else 1)
