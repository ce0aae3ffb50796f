# SPDX-License-Identifier: Apache-2.0
"""The application of source_change_test.sh: torch.compile of the model in
source_change_model.py (imported from the working directory), checked against
eager mode; prints one JSON line with Dynamo's counters. Exits 1 when the
compiled result differs from eager."""
import json
import sys

import torch
from torch._dynamo.utils import counters

import source_change_model

torch.manual_seed(0)
model = source_change_model.Scaled().eval()
x = torch.randn(4, 16)
compiled = torch.compile(model)
with torch.no_grad():
    got, want = compiled(x), model(x)
error = (got - want).abs().max().item()
print(json.dumps({"error": error, "dynamo_cache_hit": counters["dynamo_cache"]["dynamo_cache_hit"],
                  "frames_traced": counters["stats"]["unique_graphs"]}))
sys.exit(0 if error <= 1e-5 else 1)
