# SPDX-License-Identifier: Apache-2.0
# An experiment for the bench only (issue 32, item 3), never installed by
# prewarm: with TORCH_CACHING_PRECOMPILE=1, torch.compile() loads every
# precompiled graph of the function (Dynamo's CompilePackage.install calls
# after_deserialization() on each backend: Inductor's output code and its
# kernels), although the first call runs one graph. Put on PYTHONPATH, this
# makes that load happen at a graph's first call instead, by wrapping
# BundledAOTAutogradCacheArtifact.after_deserialization once the module that
# defines it is imported. It changes a PyTorch internal at run time: it
# measures what lazy loading would save, it is not a fix to ship.
import importlib.abc
import importlib.util
import sys
import threading

_TARGET = "torch._functorch._aot_autograd.aot_autograd_result"


def _make_lazy(artifact_class):
    original = artifact_class.after_deserialization

    def after_deserialization(self):
        lock = threading.Lock()
        loaded = []

        def real():
            if not loaded:
                with lock:
                    if not loaded:
                        loaded.append(original(self))
            return loaded[0]

        def forward(*args):
            return real()(*args)

        forward.serialize = lambda *a, **k: real().serialize(*a, **k)
        return forward

    artifact_class.after_deserialization = after_deserialization


class _PatchAfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        sys.meta_path.remove(self)
        _make_lazy(module.BundledAOTAutogradCacheArtifact)


sys.meta_path.insert(0, _PatchAfterImport())
