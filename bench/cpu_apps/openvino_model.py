# SPDX-License-Identifier: Apache-2.0
# A CPU application with plain OpenVINO's model cache: a deep MLP (MatMul,
# Add, Relu layers) built in code with the opset API, compiled on the CPU
# device with the core's CACHE_DIR set, and one inference on fixed data.
# Prints the answer (identical cold, warm and through a bundle) and, as the
# last line, JSON with the process's wall and CPU seconds and the compile's
# wall seconds. OV_CACHE_DIR locates the cache.
import json
import os
import resource
import time

started = time.perf_counter()
import numpy as np  # noqa: E402
import openvino as ov  # noqa: E402
import openvino.opset13 as ops  # noqa: E402

WIDTH, DEPTH, BATCH = 64, 600, 32
rng = np.random.default_rng(0)
x = ops.parameter([BATCH, WIDTH], np.float32, name="x")
h = x
for i in range(DEPTH):
    w = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    b = (0.01 * rng.standard_normal(WIDTH)).astype(np.float32)
    h = ops.add(ops.matmul(h, ops.constant(w), False, False), ops.constant(b))
    if i + 1 < DEPTH:
        h = ops.relu(h)
model = ov.Model([h], [x], "mlp")

core = ov.Core()
core.set_property({"CACHE_DIR": os.environ["OV_CACHE_DIR"]})
compile_started = time.perf_counter()
compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
compile_s = time.perf_counter() - compile_started
data = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
out = compiled(data)[0]
print(f"checksum {float(np.abs(out).sum()):.3f} argmax {int(out.argmax(axis=-1).sum())}")
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - started, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "compile_s": compile_s, "openvino": ov.__version__}))
