# SPDX-License-Identifier: Apache-2.0
"""Manifests and helpers the cases share."""
import json


def builtin_manifest(model, precision, targets, prefill=16, decode=2):
    return (f"version: 1\nmodels:\n  - name: {model}\n    preset: {model}\nprecisions: [{precision}]\n"
            f"shapes:\n  batch_sizes: [1]\n  prefill_lengths: [{prefill}]\n  decode_steps: {decode}\n"
            f"targets: [{', '.join(targets)}]\nbundle:\n  channel: bench\n  expires: 90d\n")


def runnable_targets(ctx, vendors=("cpu", "nvidia")):
    """Registry targets this host can `run` (the device is here), one per device."""
    listing = ctx.prewarm_json("targets", "--json")
    seen, names = set(), []
    for t in listing["targets"]:
        host = t.get("host", {})
        if host.get("strategy") == "run" and t.get("vendor") in vendors and host.get("device") not in seen:
            seen.add(host.get("device"))
            names.append(t["name"])
    return names


def ratio_goal(result, goal, target_text, numerator, denominator, ok, metric=None, variants=None, why=""):
    from ..results import Goal
    values = []
    for variant in variants or result.variants():
        r = result.ratio(variant, numerator, denominator, metric)
        if r is not None:
            values.append({"variant": variant, "value": round(r, 3)})
    met = all(ok(v["value"]) for v in values) if values else None
    return Goal(goal, result.name, target_text, values, met, why)


def load_json(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        from ..measure import BenchError
        raise BenchError(f"not JSON ({e}): {text[:200]}")


def tiny_manifest(targets=("cpu",)):
    """The smallest built-in job: what --quick builds."""
    return builtin_manifest("gptq-linear", "fp16", list(targets))


def default_manifest(ctx):
    return (ctx.repo / "manifests/default.yaml").read_text()


def synthetic_cache_bundle(ctx, mib, name):
    """A bundle of MIB of kernel-cache-like files (many 2-32 KiB binaries and a
    few 8-64 MiB ones, half random so zstd has work to do, as real cache
    binaries compress 2-4x), made by the real builder from a command workload
    that copies the tree into the PoCL cache it is given."""
    import random
    base = ctx.scratch(f"cases/{name}")
    tree = base / "tree"
    rng = random.Random(42)

    def blob(n):
        head = rng.randbytes(n // 2)
        return head + (head[:4096] * (n // 8192 + 1))[: n - len(head)]
    total, target = 0, mib << 20
    large = max(0, min(6, mib // 128))
    for i in range(large):
        (tree / "large").mkdir(parents=True, exist_ok=True)
        (tree / "large" / f"big{i}.bin").write_bytes(blob(64 << 20))
        total += 64 << 20
    pool, i = blob(1 << 20), 0
    while total < target:
        size = rng.randint(2048, 32768)
        d = tree / f"p{i // 64:04d}"
        d.mkdir(parents=True, exist_ok=True)
        off = rng.randint(0, len(pool) - size)
        (d / f"kernel{i}.bin").write_bytes(pool[off:off + size // 2] + rng.randbytes(size - size // 2))
        total += size
        i += 1
    manifest = ("version: 1\nmodels:\n  - name: synthetic\n    command:\n"
                f"      argv: [\"cp -R {tree}/. \\\"$POCL_CACHE_DIR\\\"/\"]\n      shell: true\n"
                "      kinds: [pocl]\nprecisions: [fp32]\ntargets: [cpu]\nbundle:\n  channel: bench\n  expires: 90d\n")
    bundle, _, _ = ctx.bundle_for(manifest, f"cases/{name}-build")
    return bundle, total


def bundle_bytes(bundle):
    """Compressed bytes per slice and uncompressed bytes per kind, read from the
    bundle itself (manifest grammar: runtime/bundle/bundle_manifest.hpp)."""
    slices = {p.name[: -len(".tar.zst")]: p.stat().st_size for p in (bundle / "slices").glob("*.tar.zst")}
    kinds = {}
    for line in (bundle / "manifest").read_text().splitlines():
        if line.startswith("file "):
            _, _, size, _, path = line.split(" ", 4)
            kind = path.split("/", 1)[0]
            kinds[kind] = kinds.get(kind, 0) + int(size)
    return slices, kinds


def startup_goals(result, install_goal, install_ms, exec_ms):
    """The two start-up goals: the median no-op install within INSTALL_MS, and
    what exec adds to the program it starts (exec - direct) within EXEC_MS."""
    from ..results import Goal
    install = [{"variant": v, "value": round(result.median(v, "install_noop"), 1)} for v in result.variants()
               if result.median(v, "install_noop") is not None]
    added = [{"variant": v, "value": round(result.median(v, "exec") - result.median(v, "direct"), 1)}
             for v in result.variants() if result.median(v, "exec") is not None]
    return [
        Goal(install_goal, result.name, f"<= {install_ms} ms", install,
             all(x["value"] <= install_ms for x in install) if install else None),
        Goal(f"exec adds <= {exec_ms} ms", result.name, f"<= {exec_ms} ms (exec - direct)", added,
             all(x["value"] <= exec_ms for x in added) if added else None),
    ]
