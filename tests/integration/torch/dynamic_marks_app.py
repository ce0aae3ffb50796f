#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An application that marks its input's batch dimension dynamic
(torch._dynamo.mark_dynamic) and calls a compiled module at three batch
sizes, on the CPU. Prints one JSON line with Dynamo's and Inductor's
counters; exits 1 when a compiled result differs from eager."""
import json
import sys


def main():
    import torch
    from torch._dynamo.utils import counters

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
    compiled = torch.compile(model)
    worst = 0.0
    with torch.no_grad():
        for batch in (2, 3, 5):
            x = torch.randn(batch, 16)
            torch._dynamo.mark_dynamic(x, 0)
            got, want = compiled(x), model(x)
            worst = max(worst, float((got - want).abs().max() / want.abs().max()))
    print(json.dumps({
        "frames_traced": counters["stats"]["unique_graphs"],
        "dynamo_cache_hit": counters["dynamo_cache"]["dynamo_cache_hit"],
        "fxgraph_cache_miss": counters["inductor"]["fxgraph_cache_miss"],
        "relative_error": worst,
    }))
    return 0 if worst <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
