# SPDX-License-Identifier: Apache-2.0
# A kernel cached the way Triton 3.x caches one: files under
# $TRITON_CACHE_DIR/<key>/ and a group file naming them by ABSOLUTE path
# (python/triton/runtime/cache.py). With triton importable, Triton's own
# FileCacheManager does it; otherwise a copy of its group semantics.
# Prints "compiled" on a miss, "cached" on a hit.
import json, os, sys
key = "KEY0123"
try:
    from triton.runtime.cache import FileCacheManager  # the real one where installed
    m = FileCacheManager(key)
    get_group, put, put_group = m.get_group, lambda d, n: m.put(d, n, binary=isinstance(d, bytes)), m.put_group
except ImportError:
    # Triton 3.x FileCacheManager's group semantics (python/triton/runtime/cache.py)
    d = os.path.join(os.environ["TRITON_CACHE_DIR"], key)
    os.makedirs(d, exist_ok=True)
    def put(data, name):
        p = os.path.join(d, name)
        open(p, "wb" if isinstance(data, bytes) else "w").write(data)
        return p
    def get_group(name):
        g = os.path.join(d, "__grp__" + name)
        if not os.path.exists(g):
            return None
        paths = json.load(open(g))["child_paths"]
        return paths if all(os.path.exists(p) for p in paths.values()) else None
    def put_group(name, group):
        put(json.dumps({"child_paths": group}), "__grp__" + name)
found = get_group("k.json")
if found is None:
    group = {n: put(b"compiled " + n.encode(), n) for n in ("k.cubin", "k.ptx")}
    group["k.json"] = put('{"name": "k"}', "k.json")
    put_group("k.json", group)
    print("compiled")
else:
    for p in found.values():
        open(p, "rb").read()
    print("cached")
