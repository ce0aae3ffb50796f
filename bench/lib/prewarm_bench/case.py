# SPDX-License-Identifier: Apache-2.0
"""The shape of a benchmark case. A case names its modes (the cache states or
methods it compares), its variants (models, programs, sizes), prepares each
variant once (bundles built, caches filled), then takes one sample per
(variant, mode, round) in a fresh process. The runner interleaves the modes
within each round, rotating their order, so that a load change on a shared
machine hits every mode alike."""


class Case:
    name = ""
    title = ""
    primary = "seconds"          # the metric plotted and used for ratios
    unit = "s"
    modes = ()
    ratios = ()                  # (name, numerator mode, denominator mode)
    rounds_quick = 1
    rounds_full = 5

    def unavailable(self, ctx):
        """Why this case cannot run on this machine, or None."""
        return None

    def variants(self, ctx):
        return ["default"]

    def prepare(self, ctx, variant):
        """Once per variant before any sample; raise BenchError to drop the variant."""

    def sample(self, ctx, variant, mode, round_):
        """One measurement in fresh processes: a dict of metric -> number."""
        raise NotImplementedError

    def goals(self, result):
        """Published targets checked against this case's medians: [Goal]."""
        return []

    def notes(self, ctx):
        """Lines for the report that say how to read this case."""
        return []
