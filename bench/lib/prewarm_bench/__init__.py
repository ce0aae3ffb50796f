# SPDX-License-Identifier: Apache-2.0
"""The benchmark driver behind bench/run (see its header)."""
