# SPDX-License-Identifier: Apache-2.0
"""The third-party programs case without running them: which variants a
machine gets (hashcat on PoCL only when asked for by name), the manifests it
builds (pyopencl's own cache off, hashcat's own cache captured, the layer's
records alone), and the programs' own first-result lines."""
import types
import unittest
from pathlib import Path

from prewarm_bench.cases.third_party import ThirdParty, first_result_of

CLINFO_GPU_MACHINE = ("Platform #0: Portable Computing Language\n `-- Device #0: cpu-skylake\n"
                      "Platform #1: NVIDIA CUDA\n `-- Device #0: NVIDIA H100 80GB HBM3\n")


def context(quick=False, variant_filter="", platforms=CLINFO_GPU_MACHINE):
    return types.SimpleNamespace(quick=quick, variant_filter=variant_filter, repo=Path("/repo"),
                                 build=Path("/build"), opencl_platforms=lambda: platforms)


class ThirdPartyCaseTest(unittest.TestCase):
    def setUp(self):
        self.case = ThirdParty()
        self.case._programs = lambda ctx: ["clpeak", "clblast", "pyopencl", "hashcat"]

    def test_platform_indices_follow_the_loader(self):
        self.assertEqual(self.case._platforms(context()), {"pocl": 0, "nvidia": 1})
        self.assertEqual(self.case._platforms(context(platforms="")), {})
        self.assertIsNotNone(self.case.unavailable(context(platforms="")))

    def test_hashcat_on_pocl_only_by_name(self):
        full = self.case.variants(context())
        self.assertIn("hashcat nvidia", full)
        self.assertNotIn("hashcat pocl", full)
        self.assertIn("hashcat pocl", self.case.variants(context(variant_filter="hashcat")))
        self.assertEqual(self.case.variants(context(quick=True)), ["clpeak pocl"])

    def test_manifests(self):
        ctx = context()
        self.case._target = lambda ctx, device: "cpu" if device == "pocl" else "h100"
        self.case._clblast_client = lambda ctx: Path("/build/clblast_client")
        py = self.case.manifest(ctx, "pyopencl", "nvidia", 1, ["cuda"])
        self.assertIn('PYOPENCL_NO_CACHE: "1"', py)
        self.assertIn('PYOPENCL_CTX: "1"', py)
        self.assertIn('CUDA_CACHE_DISABLE: "0"', py)
        self.assertIn("targets: [h100]", py)
        hashcat = self.case.manifest(ctx, "hashcat", "pocl", 0, ["pocl"])
        self.assertIn("variable: XDG_CACHE_HOME", hashcat)
        self.assertIn('"-D", "1"', hashcat)
        self.assertNotIn("caches:", self.case.manifest(ctx, "hashcat", "pocl", 0, ["programs"]))
        self.assertIn('"--backend-ignore-cuda"', self.case.manifest(ctx, "hashcat", "nvidia", 1, ["cuda"]))
        clpeak = self.case.manifest(ctx, "clpeak", "nvidia", 1, ["programs"])
        self.assertIn('argv: ["clpeak", "-p", "1", "-d", "0", "--kernel-latency"]', clpeak)
        self.assertIn("kinds: [programs]", clpeak)
        self.assertIn('"--platform", "NVIDIA CUDA"', self.case.manifest(ctx, "clblast", "nvidia", 1, ["cuda"]))

    def test_first_result_line(self):
        self.assertEqual(first_result_of('noise\n{"routines": ["gemm"], "first_result_s": 0.25, "total_s": 1}\n'), 0.25)
        self.assertIsNone(first_result_of("clpeak output\n"))
        self.assertIsNone(first_result_of("{not json\n"))

    def test_goals_name_the_layer_overhead(self):
        from prewarm_bench.results import CaseResult
        r = CaseResult("third_party", "t", "wall_s", "s", list(ThirdParty.modes))
        for mode, value in (("cold", 10.0), ("driver", 1.0), ("installed", 1.05), ("layer", 1.5),
                            ("layer_empty", 10.1)):
            r.add("clblast pocl", mode, 0, {"wall_s": value})
        goals = {g.goal: g for g in self.case.goals(r)}
        overhead = goals["layer overhead with nothing stored <= 2%"]
        self.assertEqual(overhead.values, [{"variant": "clblast pocl", "value": 1.01}])
        self.assertTrue(overhead.met)
        self.assertFalse(goals["installed >= 20x faster than cold where compilation dominates (CLBlast, hashcat)"].met)
        self.assertTrue(goals["installed first result <= 1.1x driver-cache-warm (third-party programs)"].met)


if __name__ == "__main__":
    unittest.main()
