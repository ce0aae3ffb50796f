# SPDX-License-Identifier: Apache-2.0
"""The statistics bench/run publishes: medians, ratios of medians, goals, and
the runner's interleaving and failure handling."""
import unittest

from prewarm_bench.case import Case
from prewarm_bench.measure import BenchError, run_fresh
from prewarm_bench.results import CaseResult
from prewarm_bench.runner import run_case


class ResultsTest(unittest.TestCase):
    def result(self):
        r = CaseResult("c", "t", "s", "s", ["cold", "warm"], ratio_specs=[("cold/warm", "cold", "warm")])
        for i, (cold, warm) in enumerate([(10, 1), (12, 2), (11, 4)]):
            r.add("v", "cold", i, {"s": cold})
            r.add("v", "warm", i, {"s": warm})
        return r

    def test_median_min_max(self):
        rows = {row["mode"]: row for row in self.result().summary()}
        self.assertEqual((rows["cold"]["median"], rows["cold"]["min"], rows["cold"]["max"]), (11, 10, 12))
        self.assertEqual(rows["warm"]["median"], 2)

    def test_ratio_is_of_medians(self):
        (ratio,) = self.result().ratios()
        self.assertEqual(ratio["value"], 11 / 2)

    def test_missing_mode_gives_no_ratio(self):
        r = CaseResult("c", "t", "s", "s", ["cold", "warm"], ratio_specs=[("cold/warm", "cold", "warm")])
        r.add("v", "cold", 0, {"s": 1})
        self.assertEqual(r.ratios(), [])


class Recording(Case):
    name, modes, primary = "rec", ("a", "b", "c"), "x"

    def __init__(self, fail_mode=None):
        self.order, self.fail_mode = [], fail_mode

    def variants(self, ctx):
        return ["v"]

    def sample(self, ctx, variant, mode, round_):
        self.order.append(mode)
        if mode == self.fail_mode:
            raise BenchError("boom")
        return {"x": 1.0}


class Ctx:
    quick = True
    variant_filter = ""

    def log(self, message):
        pass


class RunnerTest(unittest.TestCase):
    def test_modes_rotate_each_round(self):
        case = Recording()
        run_case(Ctx(), case, rounds=3, deadline=float("inf"))
        self.assertEqual(case.order, ["a", "b", "c", "b", "c", "a", "c", "a", "b"])

    def test_failed_mode_is_recorded_and_not_retried(self):
        case = Recording(fail_mode="b")
        result = run_case(Ctx(), case, rounds=2, deadline=float("inf"))
        self.assertEqual([f["mode"] for f in result.failures], ["b"])
        self.assertEqual(case.order.count("b"), 1)
        self.assertEqual(result.status, "ran")

    def test_budget_stops_new_rounds(self):
        case = Recording()
        result = run_case(Ctx(), case, rounds=5, deadline=0)
        self.assertEqual(len(result.samples), 3)
        self.assertTrue(any("budget" in n for n in result.notes))


class MeasureTest(unittest.TestCase):
    def test_peak_memory_is_the_childs(self):
        small = run_fresh(["python3", "-c", "pass"])
        big = run_fresh(["python3", "-c", "b = bytearray(300 << 20); b[::4096] = b'x' * len(b[::4096])"])
        self.assertGreater(big.max_rss_mib, small.max_rss_mib + 200)

    def test_timeout_kills_and_says_so(self):
        run = run_fresh(["sleep", "30"], timeout=0.5)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("killed after", run.stderr)
        with self.assertRaises(BenchError):
            run.check()


if __name__ == "__main__":
    unittest.main()
