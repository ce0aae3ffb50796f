# SPDX-License-Identifier: Apache-2.0
# A CPU application with onnxruntime's OpenVINO execution provider: a deep
# MLP (MatMul, Add, Relu layers) made as an ONNX model with onnx.helper,
# loaded in an InferenceSession with the provider on the CPU device and its
# cache_dir option, and one inference on fixed data. Prints the answer
# (identical cold, warm and through a bundle) and, as the last line, JSON
# with the process's wall and CPU seconds and the session's creation wall
# seconds. ORT_OV_CACHE_DIR locates the cache.
import json
import os
import resource
import time

started = time.perf_counter()
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

WIDTH, DEPTH, BATCH = 64, 600, 32
rng = np.random.default_rng(0)
nodes, weights, h = [], [], "x"
for i in range(DEPTH):
    w = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    b = (0.01 * rng.standard_normal(WIDTH)).astype(np.float32)
    weights += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
    nodes.append(helper.make_node("MatMul", [h, f"w{i}"], [f"m{i}"]))
    last = i + 1 == DEPTH
    nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], ["y" if last else f"a{i}"]))
    if not last:
        nodes.append(helper.make_node("Relu", [f"a{i}"], [f"r{i}"]))
        h = f"r{i}"
graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, WIDTH])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, WIDTH])], weights)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8

options = {"device_type": "CPU", "cache_dir": os.environ["ORT_OV_CACHE_DIR"]}
session_started = time.perf_counter()
session = ort.InferenceSession(model.SerializeToString(), providers=[("OpenVINOExecutionProvider", options)])
session_s = time.perf_counter() - session_started
data = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
out = session.run(None, {"x": data})[0]
print(f"checksum {float(np.abs(out).sum()):.3f} argmax {int(out.argmax(axis=-1).sum())}")
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - started, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "session_s": session_s, "providers": session.get_providers(), "onnxruntime": ort.__version__}))
