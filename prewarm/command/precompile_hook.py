# Written by prewarm for the capture of a dynamo or inductor cache; not shipped.
#
# PyTorch (2.8 to at least 2.11) loads Dynamo's precompiled frames by itself
# when TORCH_CACHING_PRECOMPILE=1, but writes them only when the program calls
# torch.compiler.save_cache_artifacts(). prewarm puts this file first on the
# warm-up's PYTHONPATH as sitecustomize, so that an unmodified program still
# leaves them behind: at exit it mends what PyTorch records wrongly (below),
# saves, and it runs the sitecustomize it shadows, as coverage and tracers do.
# It also numbers the capture's Dynamo globals apart from any other process's
# (UniqueIdOffset), so that a loaded frame whose guards fail compiles again,
# has the program's own Triton compiles use the ptxas PyTorch's do
# (TritonPtxasPin), and keeps the marks mark_dynamic leaves on an input in the
# frame's saved guard state, which PyTorch drops (KeepDynamoMarks).
import atexit
import importlib.abc
import importlib.util
import itertools
import os
import sys

# Where the capture's Dynamo starts numbering the globals it installs.
UNIQUE_ID_START = 1 << 20


def frame_module_fixes(entries, modules):
    """(entry, code, recorded, actual) for each precompiled code whose recorded
    module is not the one that defined it.

    Dynamo records a frame's module from the function's __module__. A function
    decorated with functools.wraps (transformers decorates most forward methods
    so) carries the wrapped function's __module__, while its code runs in the
    decorator's module. On load, PyTorch builds the frame's guards against the
    recorded module's globals and installs the compiled functions there: the
    guards then fail on a global the recorded module lacks (KeyError on
    G['...']) and Dynamo traces the frame again, in every process. The module
    that defined a code is the one whose file is the code's file; where no
    single module is, the entry is left as recorded (guards fail, the program
    compiles as without the entry: slower, never wrong)."""
    by_file = {}
    for name, module in list(modules.items()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path:
            by_file.setdefault(os.path.abspath(path), []).append(name)
    fixes = []
    for entry in entries:
        for code in getattr(entry, "codes", ()):
            filename = getattr(code.python_code, "co_filename", None)
            if not isinstance(filename, str):
                continue
            recorded = code.python_module
            recorded_file = getattr(modules.get(recorded), "__file__", None)
            if isinstance(recorded_file, str) and os.path.abspath(recorded_file) == os.path.abspath(filename):
                continue
            candidates = [name for name in by_file.get(os.path.abspath(filename), ()) if name != "__main__"]
            if len(candidates) == 1:
                fixes.append((entry, code, recorded, candidates[0]))
    return fixes


def mend_frame_modules(torch):
    """Applies frame_module_fixes to the entries this process recorded."""
    from torch._dynamo.precompile_context import PrecompileContext

    fixes = frame_module_fixes(list(PrecompileContext._dynamo_cache_entries.values()), sys.modules)
    for _, code, recorded, actual in fixes:
        code.python_module = actual
    return [(recorded, actual) for _, _, recorded, actual in fixes]


def save_dynamo_entries():
    """At exit: nothing unless the program imported torch and precompile is on."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        if not torch._dynamo.config.caching_precompile:
            return
        try:
            for recorded, actual in mend_frame_modules(torch):
                print("prewarm: a Dynamo frame recorded under %s runs in %s's globals: saved under %s"
                      % (recorded, actual, actual), file=sys.stderr)
        except Exception as error:  # the entries stay as PyTorch recorded them
            print("prewarm: Dynamo's frame modules were not checked: %s" % error, file=sys.stderr)
        torch.compiler.save_cache_artifacts()
    except Exception as error:  # the warm-up's result stands; the proof shows what is missing
        print("prewarm: Dynamo's precompiled entries were not saved: %s" % error, file=sys.stderr)


class AfterImport(importlib.abc.MetaPathFinder):
    """Runs self.patch(module) once the module named self.MODULE has been
    executed, the first time the program imports it; then steps aside."""

    MODULE = None

    def patch(self, module):
        raise NotImplementedError

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.MODULE:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # once; and the lookup below must not find this finder
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            self.patch(module)

        spec.loader.exec_module = exec_module
        return spec


class UniqueIdOffset(AfterImport):
    """Starts Dynamo's unique_id counter at UNIQUE_ID_START in this process.

    A loaded frame puts the globals its guards need into the frame's module
    under the names the capture gave them (`__builtins_dict___0`). When that
    frame's guards then fail (another model, other shapes), Dynamo traces it in
    the same process, numbers its own globals from 0 again and stops on
    `assert name not in scope` (torch 2.11, CleanupHook.create): the program
    fails where it would have compiled. Names from a counter that starts far
    above what one process uses cannot meet a fresh process's."""

    MODULE = "torch._dynamo.bytecode_transformation"

    def __init__(self, start=UNIQUE_ID_START):
        self.start = start

    def patch(self, module):
        if hasattr(module, "_unique_id_counter"):
            module._unique_id_counter = itertools.count(self.start)


class TritonPtxasPin(importlib.abc.MetaPathFinder):
    """Sets TRITON_PTXAS_PATH to torch's bundled ptxas (torch/bin/ptxas) when
    the program imports torch, unless it is set already: the rule of torch
    2.11's _set_triton_ptxas_path(), which torch applies in its compile
    workers and before a compile in its own process, but not in a process
    that hands its compiles to workers.

    Triton keys a kernel with the version of the ptxas that compiles it (and
    derives the PTX version from it). At the capture, Inductor's workers
    compile with torch's ptxas (CUDA 13.0 in torch 2.11+cu130) while the
    program's own process compiles what coordinate descent and autotuning
    try (mode max-autotune*) with Triton's bundled one (CUDA 12.8). Where
    the bundle is installed the kernels load in the program's process
    (TORCHINDUCTOR_COMPILE_THREADS=1), with torch's ptxas: every tuned
    configuration the capture compiled in its own process came back under a
    new key (H200: "triton: 181 reused, 128 new"; one kernel compiled both
    ways on a CPU host: .version 8.7 and 9.0, two keys). Pinned, both
    compile alike. Set when torch is imported, before anything asks Triton
    for the ptxas version, which it keeps for the life of the process. Only
    where torch is imported: other programs of the warm-up are left alone."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # once; and the lookup below must not find this finder
        spec = importlib.util.find_spec(fullname)
        if spec is not None:
            pin_triton_ptxas(spec, os.environ)
        return spec


def pin_triton_ptxas(torch_spec, environ):
    """Sets environ's TRITON_PTXAS_PATH to torch's bin/ptxas if it is unset
    and that file is executable; returns the value it set, else None."""
    if environ.get("TRITON_PTXAS_PATH") is not None:
        return None
    for location in torch_spec.submodule_search_locations or ():
        ptxas = os.path.join(os.path.abspath(location), "bin", "ptxas")
        if os.path.isfile(ptxas) and os.access(ptxas, os.X_OK):
            environ["TRITON_PTXAS_PATH"] = ptxas
            return ptxas
    return None


class _Rebuilt:
    """Pickles as the reduction it holds: the tensor PyTorch's pickler would
    rebuild. Pickled once; a second reference is a memo lookup."""

    def __init__(self, reduction):
        self.reduction = reduction

    def __reduce__(self):
        return self.reduction


class _SetAttr:
    """Pickles as setattr(target, name, value), run when loaded."""

    def __init__(self, target, name, value):
        self.target, self.name, self.value = target, name, value

    def __reduce__(self):
        return setattr, (self.target, self.name, self.value)


def dynamo_marks(tensor):
    """The markings torch._dynamo.mark_dynamic and its kin leave on a tensor
    (_dynamo_dynamic_indices, ...) that pickle as plain data."""
    plain = (set, frozenset, dict, tuple, list, int, str, bool, type(None))
    return {name: value for name, value in getattr(tensor, "__dict__", {}).items()
            if name.startswith("_dynamo_") and isinstance(value, plain)}


def keep_dynamo_marks(guards_module):
    """Has GuardsStatePickler keep a tensor's Dynamo markings.

    A precompiled frame's guards are built again when it loads, from the
    frame's inputs as pickled at the capture. torch 2.11 pickles a tensor as
    its meta copy (_unpickle_tensor): the _dynamo_dynamic_indices that
    mark_dynamic set are lost, so the rebuilt TENSOR_MATCH adds
    hasattr(x, '_dynamo_dynamic_indices') == False where the traced frame had
    x._dynamo_dynamic_indices.issubset({...}), and every input the program
    marks dynamic fails the loaded frame: Dynamo traces it again. Pickled as
    getitem((tensor, setattr(tensor, name, value), ...), 0), the rebuilt
    tensor has them again, and the load needs nothing but torch."""
    import operator

    pickler = getattr(guards_module, "GuardsStatePickler", None)
    original = getattr(pickler, "reducer_override", None)
    if original is None or getattr(original, "_prewarm_keeps_marks", False):
        return False

    def reducer_override(self, obj):
        reduction = original(self, obj)
        if not (isinstance(reduction, tuple) and reduction and reduction[0] == type(self)._unpickle_tensor):
            return reduction
        marks = dynamo_marks(obj)
        if not marks:
            return reduction
        rebuilt = _Rebuilt(reduction)
        return operator.getitem, ((rebuilt,) + tuple(_SetAttr(rebuilt, n, v) for n, v in sorted(marks.items())), 0)

    reducer_override._prewarm_keeps_marks = True
    pickler.reducer_override = reducer_override
    return True


class KeepDynamoMarks(AfterImport):
    """Applies keep_dynamo_marks when torch._dynamo.guards is imported."""

    MODULE = "torch._dynamo.guards"

    def patch(self, module):
        keep_dynamo_marks(module)


def chain(here, path):
    """Runs the sitecustomize this one shadows (the first on `path` outside
    `here`), as if it were first; returns it or None."""
    import importlib.machinery
    import importlib.util

    for entry in path:
        if os.path.abspath(entry or ".") == here:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None


# atexit handlers run last-registered first: this one, registered before the
# program imports torch, runs after torch's own (its compile workers are gone
# by then; saving needs none of them).
if __name__ == "sitecustomize":
    if os.environ.get("TORCH_CACHING_PRECOMPILE") == "1":
        sys.meta_path.insert(0, UniqueIdOffset())
        sys.meta_path.insert(0, KeepDynamoMarks())
    if os.environ.get("TRITON_PTXAS_PATH") is None:
        sys.meta_path.insert(0, TritonPtxasPin())
    atexit.register(save_dynamo_entries)
    chain(os.path.dirname(os.path.abspath(__file__)), list(sys.path))
