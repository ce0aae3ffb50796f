# SPDX-License-Identifier: Apache-2.0
"""The applications case without running them: the manifests it builds
(each application's own cache as a custom cache, clFFT's without a subdir,
darktable in its kernel directory) and the comparison of a build's hit
proof with exec --audit, kind by kind."""
import unittest
from pathlib import Path

from prewarm_bench.cases.apps import APPS, Apps, proof_audit_mismatch


def report(*kinds):
    return {"jobs": [{"report": {"hit_proof": {"kinds": [
        {"kind": k, "reused_files": r, "new_files": n} for k, r, n in kinds]}}}]}


def audit(*kinds, programs=False):
    run = [{"kind": k, "reused_files": r, "new_files": n} for k, r, n in kinds]
    if programs:
        run.append({"kind": "programs", "reused_files": 0, "new_files": 0})
    return {"kinds": run, "this_run": {"kinds": run}}


class AppsCaseTest(unittest.TestCase):
    def test_the_proof_equals_the_audit_kind_by_kind(self):
        self.assertEqual(proof_audit_mismatch(report(("pocl", 18, 0), ("custom/opencv", 7, 0)),
                                              audit(("custom/opencv", 7, 0), ("pocl", 18, 0), programs=True)), "")
        self.assertEqual(proof_audit_mismatch(report(("pocl", 38, 0)), audit(("pocl", 40, 0))),
                         "pocl: proof 38 reused, 0 new, audit 40 reused, 0 new")
        self.assertEqual(proof_audit_mismatch(report(("pocl", 5, 0), ("custom/x", 1, 0)), audit(("pocl", 5, 0))),
                         "custom/x: proof 1 reused, 0 new, audit absent")
        self.assertEqual(proof_audit_mismatch({}, audit(("pocl", 5, 0))), "the build has no hit proof")

    def test_manifests_declare_each_applications_own_cache(self):
        case, out = Apps(), Path("/out")
        opencv = APPS["opencv"]
        opencv.script = Path("/repo/bench/apps/opencv_tapi.py")
        text = case.manifest("opencv", opencv, out)
        self.assertIn("variable: XDG_CACHE_HOME\n          subdir: opencv\n", text)
        self.assertIn('OPENCV_OPENCL_DEVICE: ":CPU:"', text)
        self.assertIn('"1280x720"', text)
        clfft = case.manifest("clfft", APPS["clfft"], out)
        self.assertIn("variable: CLFFT_CACHE_PATH\n", clfft)
        self.assertNotIn("subdir", clfft)
        darktable = APPS["darktable"]
        darktable.input = Path("/in.png")
        self.assertIn("cwd: /usr/share/darktable/kernels\n", case.manifest("darktable", darktable, out))
        self.assertNotIn("caches:", case.manifest("clpeak", APPS["clpeak"], out))

    def test_a_changed_input_is_warmed_up_with_the_warm_ups_input(self):
        other = APPS["opencv-other-input"]
        other.script = Path("/s.py")
        self.assertFalse(other.same_as_warmup)
        self.assertIn("1280x720", other.build_argv(Path("/o")))
        self.assertIn("1920x1080", other.argv(Path("/o")))


if __name__ == "__main__":
    unittest.main()
