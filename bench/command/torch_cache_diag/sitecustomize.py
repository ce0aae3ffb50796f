# SPDX-License-Identifier: Apache-2.0
"""Diagnosis of torch.compile's caches in a process and its compile workers,
for bench/command/gpu_torch_modes.sh: put this directory first on PYTHONPATH
and name a log in PREWARM_DIAG_LOG. Appends JSON lines:

  {"ev": "open", "path": ...}          every file opened under TRITON_CACHE_DIR or
                                       TORCHINDUCTOR_CACHE_DIR (PREWARM_DIAG_OPENS=1)
  {"ev": "read_best", "file", "exists", "stored", "configs_hash", "n_configs", "result"}
                                       Inductor's autotune cache lookup (.best_config)
  {"ev": "save", "file", "data"}       an autotune result written
  {"ev": "populate", "key", "content"} a .best_config written from loaded cache artifacts
  {"ev": "triton", "name", "hit", "hash", "src_hash", "fn_key", "file"}
                                       every Triton compile (cache hit or not)

Diagnosis only: it changes nothing the program does. A sitecustomize this one
shadows runs after it."""
import importlib.abc
import importlib.util
import json
import os
import sys

LOG = os.environ.get("PREWARM_DIAG_LOG")


def emit(**record):
    record["pid"] = os.getpid()
    record["cache"] = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
    record["triton_dir"] = os.environ.get("TRITON_CACHE_DIR", "")
    if os.environ.get("PREWARM_DIAG_RUN"):
        record["run"] = os.environ["PREWARM_DIAG_RUN"]
    try:
        with open(LOG, "a") as f:
            f.write(json.dumps(record, default=str) + "\n")
    except OSError:
        pass


def watch_opens():
    roots = [os.path.realpath(os.environ[v]) for v in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR") if os.environ.get(v)]

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if path.startswith("/") and any(path.startswith(r) or os.path.realpath(path).startswith(r) for r in roots):
                emit(ev="open", path=path, mode=str(args[1]) if len(args) > 1 else "")

    sys.addaudithook(hook)


def patch_autotune_cache(module):
    cls = module.AutotuneCache
    read_best = cls.read_best
    save = cls.save

    def logged_read_best(self, inductor_meta, configs):
        path = self.local_cache[1] if self.local_cache else None
        stored = None
        if path and os.path.exists(path):
            try:
                stored = json.load(open(path))
            except (OSError, ValueError):
                stored = "unreadable"
        result = read_best(self, inductor_meta, configs)
        emit(ev="read_best", file=path, exists=stored is not None, stored=stored, configs_hash=self.configs_hash,
             n_configs=len(configs), result=None if result is None else str(result),
             coordesc=inductor_meta.get("coordinate_descent_tuning"))
        return result

    def logged_save(self, config, time_taken_ns, found_by_coordesc=False, triton_cache_hash=None):
        emit(ev="save", file=self.local_cache[1] if self.local_cache else None, config=str(config),
             found_by_coordesc=found_by_coordesc, triton_cache_hash=triton_cache_hash, configs_hash=self.configs_hash)
        return save(self, config, time_taken_ns, found_by_coordesc=found_by_coordesc,
                    triton_cache_hash=triton_cache_hash)

    # Bound methods are pickled by name (save_cache_hook goes to compile
    # workers): the wrappers keep the names they replace.
    for wrapper, name in ((logged_read_best, "read_best"), (logged_save, "save")):
        wrapper.__name__ = name
        wrapper.__qualname__ = f"{cls.__qualname__}.{name}"
    cls.read_best = logged_read_best
    cls.save = logged_save

    # Cache artifacts (Mega-Cache, Dynamo's precompiled frames) write
    # .best_config files when they are loaded.
    artifact = getattr(module, "AutotuneCacheArtifact", None)
    if artifact is not None:
        populate = artifact.populate_cache

        def logged_populate(self):
            emit(ev="populate", key=self.key, content=str(self.content)[:300])
            return populate(self)

        logged_populate.__name__ = "populate_cache"
        logged_populate.__qualname__ = f"{artifact.__qualname__}.populate_cache"
        artifact.populate_cache = logged_populate


def patch_triton(knobs):
    def listener(src, metadata, metadata_group, times, cache_hit):
        fn = getattr(src, "fn", None)
        emit(ev="triton", name=getattr(src, "name", "?"), hit=cache_hit, hash=metadata.get("hash"),
             src_hash=src.hash() if hasattr(src, "hash") else None,
             fn_key=getattr(fn, "cache_key", None),
             file=getattr(getattr(getattr(fn, "fn", None), "__code__", None), "co_filename", None),
             constants=str(getattr(src, "constants", ""))[:200], warps=metadata.get("num_warps"),
             stages=metadata.get("num_stages"))

    knobs.compilation.listener = listener


PATCHES = {"torch._inductor.runtime.autotune_cache": patch_autotune_cache, "triton.knobs": patch_triton}


class PatchAfterImport(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def patched(module):
            exec_module(module)
            try:
                PATCHES[fullname](module)
            except Exception as error:  # diagnosis must never break the program
                emit(ev="patch_failed", module=fullname, error=repr(error))

        spec.loader.exec_module = patched
        return spec


if LOG:
    if os.environ.get("PREWARM_DIAG_OPENS") == "1":
        watch_opens()
    sys.meta_path.insert(0, PatchAfterImport())
    emit(ev="start", argv=sys.argv[:3])

# Run the sitecustomize this one shadows, if any: the first one after this
# directory on sys.path (one before it, such as prewarm's capture hook, runs
# this one itself).
_here = os.path.dirname(os.path.abspath(__file__))
_seen = False
for _entry in sys.path:
    _entry = os.path.abspath(_entry or ".")
    if _entry == _here:
        _seen = True
    elif _seen and os.path.isfile(os.path.join(_entry, "sitecustomize.py")):
        _spec = importlib.util.spec_from_file_location("_shadowed_sitecustomize", os.path.join(_entry, "sitecustomize.py"))
        _module = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(_module)
        break
