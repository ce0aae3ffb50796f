# SPDX-License-Identifier: Apache-2.0
# A CPU application with PyTensor's compiled C modules (C mode: the cvm
# linker): a training step of a 3-layer MLP (its loss and gradient, one
# function) and an evaluation, compiled once each and run on fixed data.
# Prints the answer (identical cold, warm and through a bundle) and, as the
# last line, JSON with the process's wall and CPU seconds. PYTENSOR_FLAGS's
# base_compiledir locates the cache.
import json
import resource
import time

started = time.perf_counter()
import numpy as np  # noqa: E402
import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pytensor.compile.mode import Mode  # noqa: E402

WIDTHS = [64, 128, 128, 10]
mode = Mode(linker="cvm", optimizer="fast_run")
rng = np.random.default_rng(0)
params = []
for a, b in zip(WIDTHS[:-1], WIDTHS[1:]):
    params.append(pytensor.shared(rng.standard_normal((a, b)) / np.sqrt(a)))
    params.append(pytensor.shared(np.zeros(b)))

x = pt.dmatrix("x")
y = pt.dmatrix("y")
h = x
for i in range(0, len(params), 2):
    h = h @ params[i] + params[i + 1]
    if i + 2 < len(params):
        h = pt.tanh(h)
probabilities = pt.special.softmax(h, axis=-1)
loss = -pt.mean(pt.sum(y * pt.log(probabilities + 1e-9), axis=-1))
grads = pytensor.grad(loss, params)
step = pytensor.function([x, y], loss, updates=[(p, p - 0.01 * g) for p, g in zip(params, grads)], mode=mode)
evaluate = pytensor.function([x], pt.argmax(h, axis=-1), mode=mode)

data = rng.standard_normal((128, WIDTHS[0]))
labels = np.eye(10)[np.arange(128) % 10]
value = step(data, labels)
predicted = evaluate(data)
print(f"loss {float(value):.6f} predictions {int(predicted.sum())}")
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - started, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "pytensor": pytensor.__version__}))
