# SPDX-License-Identifier: Apache-2.0
# An OpenVINO application's warm-up as a user writes it: a small network with
# constant weights (a fully connected layer, bias, ReLU) compiled for "GPU".
# OpenVINO's GPU plugin builds its OpenCL kernels through Intel's driver
# (NEO), so on a virtual Intel device they land in NEO's cache. Kernels do not
# execute there: the script stops after compile_model (an inference would
# wait for results that never come). The weights are fixed values, so every
# run builds the same programs.
import numpy as np
import openvino as ov
import openvino.opset13 as ops

x = ops.parameter([1, 64], np.float32, name="x")
weights = ops.constant(np.linspace(-1.0, 1.0, 64 * 32, dtype=np.float32).reshape(64, 32))
bias = ops.constant(np.linspace(0.0, 0.5, 32, dtype=np.float32))
y = ops.relu(ops.add(ops.matmul(x, weights, False, False), bias))
model = ov.Model([y], [x], "tiny-fc")
core = ov.Core()
print("devices:", core.available_devices, flush=True)
compiled = core.compile_model(model, "GPU")
print("compiled for", compiled.get_property("EXECUTION_DEVICES"), flush=True)
