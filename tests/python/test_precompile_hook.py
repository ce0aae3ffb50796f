# SPDX-License-Identifier: Apache-2.0
"""Unit tests of the dynamo kind's capture hook (prewarm/command/precompile_hook.py),
with the standard library only: PyTorch's entries are stood in for by plain
objects of the same shape (python_code.co_filename, python_module), and the hook
runs for real as the sitecustomize of a child Python.

  python3 -m unittest discover -s tests/python -p 'test_*.py'"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import types
import unittest

HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "prewarm", "command", "precompile_hook.py")


def load_hook():
    spec = importlib.util.spec_from_file_location("precompile_hook", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code_entry(filename, module):
    return types.SimpleNamespace(python_code=types.SimpleNamespace(co_filename=filename), python_module=module)


def module_at(path):
    return types.SimpleNamespace(__file__=path)


class FrameModuleFixes(unittest.TestCase):
    def setUp(self):
        self.hook = load_hook()
        self.modules = {
            "transformers.utils.generic": module_at("/site/transformers/utils/generic.py"),
            "transformers.models.qwen2.modeling_qwen2": module_at("/site/transformers/models/qwen2/modeling_qwen2.py"),
            "__main__": module_at("/app/main.py"),
            "app": module_at("/app/main.py"),
            "builtins": types.SimpleNamespace(),
        }

    def fixes(self, *codes):
        entry = types.SimpleNamespace(codes=list(codes))
        return [(recorded, actual) for _, _, recorded, actual in self.hook.frame_module_fixes([entry], self.modules)]

    def test_decorated_frame_is_recorded_in_the_decorators_module(self):
        # functools.wraps gave the wrapper the model's __module__; its code is generic.py's.
        code = code_entry("/site/transformers/utils/generic.py", "transformers.models.qwen2.modeling_qwen2")
        self.assertEqual(self.fixes(code),
                         [("transformers.models.qwen2.modeling_qwen2", "transformers.utils.generic")])

    def test_frame_already_in_its_module_is_left(self):
        code = code_entry("/site/transformers/models/qwen2/modeling_qwen2.py", "transformers.models.qwen2.modeling_qwen2")
        self.assertEqual(self.fixes(code), [])

    def test_main_is_never_chosen_over_the_named_module(self):
        code = code_entry("/app/main.py", "transformers.models.qwen2.modeling_qwen2")
        self.assertEqual(self.fixes(code), [("transformers.models.qwen2.modeling_qwen2", "app")])

    def test_ambiguous_or_unknown_files_are_left_as_recorded(self):
        self.modules["app_copy"] = module_at("/app/main.py")
        ambiguous = code_entry("/app/main.py", "transformers.models.qwen2.modeling_qwen2")
        unknown = code_entry("<string>", "transformers.models.qwen2.modeling_qwen2")
        self.assertEqual(self.fixes(ambiguous, unknown), [])

    def test_entries_without_codes_or_filenames_are_skipped(self):
        odd = types.SimpleNamespace(python_code=types.SimpleNamespace(co_filename=None), python_module="x")
        self.assertEqual(self.hook.frame_module_fixes([types.SimpleNamespace(), types.SimpleNamespace(codes=[odd])],
                                                      self.modules), [])


class UniqueIdOffset(unittest.TestCase):
    """The capture numbers Dynamo's installed globals from UNIQUE_ID_START, so
    that a fresh trace of a loaded frame (numbering from 0) cannot collide."""

    def child(self, precompile):
        with tempfile.TemporaryDirectory() as tmp:
            hook_dir = os.path.join(tmp, "hook")
            package = os.path.join(tmp, "site", "torch", "_dynamo")
            os.makedirs(hook_dir)
            os.makedirs(package)
            with open(HOOK) as src, open(os.path.join(hook_dir, "sitecustomize.py"), "w") as dst:
                dst.write(src.read())
            for init in (os.path.join(tmp, "site", "torch", "__init__.py"), os.path.join(package, "__init__.py")):
                open(init, "w").close()
            # A stand-in with torch 2.11's counter and unique_id.
            with open(os.path.join(package, "bytecode_transformation.py"), "w") as f:
                f.write("import itertools\n_unique_id_counter = itertools.count()\n"
                        "def unique_id(name):\n    return f'{name}_{next(_unique_id_counter)}'\n")
            env = dict(os.environ, PYTHONPATH=hook_dir + os.pathsep + os.path.join(tmp, "site"))
            env.pop("TORCH_CACHING_PRECOMPILE", None)
            if precompile:
                env["TORCH_CACHING_PRECOMPILE"] = "1"
            code = ("from torch._dynamo.bytecode_transformation import unique_id\n"
                    "import torch._dynamo.bytecode_transformation as b, importlib\n"
                    "print(unique_id('__builtins_dict__'), unique_id('x'))\n")
            return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)

    def test_capture_numbers_from_the_offset(self):
        done = self.child(precompile=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        start = load_hook().UNIQUE_ID_START
        self.assertEqual(done.stdout.split(), [f"__builtins_dict___{start}", f"x_{start + 1}"])

    def test_without_precompile_nothing_changes(self):
        done = self.child(precompile=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.split(), ["__builtins_dict___0", "x_1"])


class TritonPtxasPin(unittest.TestCase):
    """A program that imports torch gets TRITON_PTXAS_PATH = torch/bin/ptxas
    (torch's own rule for its compile workers) unless it set one; others and
    a torch without ptxas are left alone. With a stand-in torch package; the
    keys themselves: tests/integration/torch/ptxas_pin_test.py."""

    def child(self, code, ptxas=True, preset=None):
        with tempfile.TemporaryDirectory() as tmp:
            hook_dir = os.path.join(tmp, "hook")
            torch_dir = os.path.join(tmp, "site", "torch")
            os.makedirs(hook_dir)
            os.makedirs(os.path.join(torch_dir, "bin"))
            with open(HOOK) as src, open(os.path.join(hook_dir, "sitecustomize.py"), "w") as dst:
                dst.write(src.read())
            open(os.path.join(torch_dir, "__init__.py"), "w").close()
            if ptxas:
                with open(os.path.join(torch_dir, "bin", "ptxas"), "w") as f:
                    f.write("#!/bin/sh\n")
                os.chmod(os.path.join(torch_dir, "bin", "ptxas"), 0o755)
            env = dict(os.environ, PYTHONPATH=hook_dir + os.pathsep + os.path.join(tmp, "site"))
            env.pop("TRITON_PTXAS_PATH", None)
            if preset is not None:
                env["TRITON_PTXAS_PATH"] = preset
            done = subprocess.run([sys.executable, "-c", code + "\nimport os; print(os.environ.get('TRITON_PTXAS_PATH'))"],
                                  env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            return done.stdout.split()[-1].replace(os.path.realpath(tmp), "TMP").replace(tmp, "TMP")

    def test_importing_torch_pins_its_ptxas(self):
        self.assertEqual(self.child("import torch"), os.path.join("TMP", "site", "torch", "bin", "ptxas"))

    def test_a_path_the_program_set_is_kept(self):
        self.assertEqual(self.child("import torch", preset="/opt/cuda/bin/ptxas"), "/opt/cuda/bin/ptxas")

    def test_a_torch_without_ptxas_leaves_it_unset(self):
        self.assertEqual(self.child("import torch", ptxas=False), "None")

    def test_a_program_without_torch_is_left_alone(self):
        self.assertEqual(self.child("import json"), "None")


class MarkedTensor:  # stands in for torch.Tensor: instances carry a __dict__
    def __init__(self, shape):
        self.shape = shape


def fake_guards_module():
    """torch._dynamo.guards' GuardsStatePickler as torch 2.11 has it: a tensor
    pickles as a rebuild from its shape alone (its meta copy)."""
    import pickle

    class GuardsStatePickler(pickle.Pickler):
        @classmethod
        def _unpickle_tensor(cls, shape):
            return MarkedTensor(shape)

        def reducer_override(self, obj):
            if isinstance(obj, MarkedTensor):
                return type(self)._unpickle_tensor, (obj.shape,)
            return NotImplemented

    module = types.ModuleType("fake_guards")
    module.GuardsStatePickler = GuardsStatePickler
    GuardsStatePickler.__module__ = "fake_guards"
    GuardsStatePickler.__qualname__ = "GuardsStatePickler"
    sys.modules["fake_guards"] = module
    return module


def round_trip(module, obj):
    import io
    import pickle

    buf = io.BytesIO()
    module.GuardsStatePickler(buf).dump(obj)
    return pickle.loads(buf.getvalue())  # the application's load: no hook


class KeepDynamoMarks(unittest.TestCase):
    def setUp(self):
        self.hook = load_hook()
        self.guards = fake_guards_module()

    def marked(self):
        t = MarkedTensor((1, 16))
        t._dynamo_dynamic_indices = {0, 1}
        return t

    def test_marks_are_lost_without_the_hook(self):
        self.assertFalse(hasattr(round_trip(self.guards, self.marked()), "_dynamo_dynamic_indices"))

    def test_marks_survive_once_patched_and_a_shared_tensor_stays_one_object(self):
        self.assertTrue(self.hook.keep_dynamo_marks(self.guards))
        self.assertFalse(self.hook.keep_dynamo_marks(self.guards))  # patched once
        t = self.marked()
        t._dynamo_hint_overrides = {}
        t._specialize_on = {0: []}  # not a _dynamo_ mark: left out
        a, b = round_trip(self.guards, {"x": t, "y": t}).values()
        self.assertIs(a, b)
        self.assertEqual(a.shape, (1, 16))
        self.assertEqual(a._dynamo_dynamic_indices, {0, 1})
        self.assertEqual(a._dynamo_hint_overrides, {})
        self.assertFalse(hasattr(a, "_specialize_on"))

    def test_unmarked_tensors_pickle_as_before(self):
        self.hook.keep_dynamo_marks(self.guards)
        self.assertEqual(round_trip(self.guards, MarkedTensor((3,))).__dict__, {"shape": (3,)})

    def test_a_pickler_of_another_shape_is_left_alone(self):
        module = types.ModuleType("other_guards")
        self.assertFalse(self.hook.keep_dynamo_marks(module))


class AsSitecustomize(unittest.TestCase):
    """The hook as the child's sitecustomize: it chains to the one it shadows
    and does nothing at exit for a program that never imported torch."""

    def run_child(self, code, with_shadowed):
        with tempfile.TemporaryDirectory() as tmp:
            hook_dir = os.path.join(tmp, "hook")
            other = os.path.join(tmp, "other")
            os.makedirs(hook_dir)
            os.makedirs(other)
            with open(HOOK) as src, open(os.path.join(hook_dir, "sitecustomize.py"), "w") as dst:
                dst.write(src.read())
            if with_shadowed:
                with open(os.path.join(other, "sitecustomize.py"), "w") as f:
                    f.write("import builtins\nbuiltins.SHADOWED_RAN = True\n")
            env = dict(os.environ, PYTHONPATH=hook_dir + os.pathsep + other)
            env.pop("PYTHONSTARTUP", None)
            return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)

    def test_chains_to_the_shadowed_sitecustomize(self):
        done = self.run_child("import builtins, sitecustomize; print(getattr(builtins, 'SHADOWED_RAN', False),"
                              " hasattr(sitecustomize, 'save_dynamo_entries'))", with_shadowed=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.split(), ["True", "True"])

    def test_without_torch_exit_is_silent(self):
        done = self.run_child("print('ran')", with_shadowed=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "ran")
        self.assertEqual(done.stderr, "")

    def test_save_failure_is_reported_not_raised(self):
        # A stand-in torch whose save fails: the program's exit status stands.
        code = ("import sys, types\n"
                "t = types.ModuleType('torch')\n"
                "t._dynamo = types.SimpleNamespace(config=types.SimpleNamespace(caching_precompile=True))\n"
                "def fail(): raise RuntimeError('disk full')\n"
                "t.compiler = types.SimpleNamespace(save_cache_artifacts=fail)\n"
                "sys.modules['torch'] = t\n")
        done = self.run_child(code, with_shadowed=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("Dynamo's precompiled entries were not saved: disk full", done.stderr)
        self.assertIn("Dynamo's frame modules were not checked", done.stderr)


if __name__ == "__main__":
    unittest.main()
