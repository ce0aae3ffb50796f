# SPDX-License-Identifier: Apache-2.0
# A small PyTensor program in C mode (the cvm linker: every op a C module
# compiled by the host compiler into base_compiledir/compiledir_<platform>/).
# Prints its result with every digit, so that a run on a bundle's modules can
# be compared with a cold run.
import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.compile.mode import Mode

x = pt.dmatrix("x")
w = pt.dvector("w")
y = pt.tanh(x @ w) + pt.exp(-x.sum(axis=0)).mean()
f = pytensor.function([x, w], y, mode=Mode(linker="cvm", optimizer="fast_run"))
r = f(np.arange(12.0).reshape(4, 3) / 10, np.array([0.5, -1.0, 2.0]))
print("result", " ".join(repr(float(v)) for v in r))
print("exception_verbosity", pytensor.config.exception_verbosity)
