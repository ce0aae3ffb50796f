# SPDX-License-Identifier: Apache-2.0
# The model of source_change_test.sh: a module whose source the test edits
# after the bundle was built (the `* 2` below becomes `* 3`, same line count),
# as an application update that keeps the old bundle would.
import torch


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2
