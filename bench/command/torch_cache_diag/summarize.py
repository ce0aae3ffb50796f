#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summary of torch_cache_diag logs (sitecustomize.py beside this): per
Inductor cache directory (one per run), the autotune cache lookups (found,
used, and why a found one was not), the autotune results saved, the Triton
compiles that missed (and, for a kernel name also compiled under another
cache directory, which part of the key differs), and the files opened.

  summarize.py LOG.jsonl [more.jsonl ...] [--opens]"""
import collections
import json
import os
import sys


def short(path, cache):
    cache = cache.split(" run ")[0]
    return os.path.relpath(path, cache) if cache and path and path.startswith(cache) else path


def kind_relative(r):
    """An opened path as KIND/relative, so that runs on different copies compare."""
    for kind, root in (("triton", r.get("triton_dir", "")), ("inductor", r.get("cache", ""))):
        if root and r["path"].startswith(root.rstrip("/") + "/"):
            return f"{kind}/{r['path'][len(root.rstrip('/')) + 1:]}"
    return r["path"]


def diff_opens(by_cache):
    """Files one run opened and another did not, pairwise for the first two runs with opens."""
    opened = {c: {kind_relative(r) for r in rs if r["ev"] == "open"} for c, rs in by_cache.items()}
    runs = [c for c in opened if opened[c]]
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            for x, y in ((a, b), (b, a)):
                only = sorted(opened[x] - opened[y])
                print(f"## opened under {x} and not under {y}: {len(only)}")
                for o in only[:60]:
                    print(f"  - {o}")


def main(paths, show_opens):
    records = [json.loads(line) for p in paths for line in open(p) if line.strip()]
    by_cache = collections.defaultdict(list)
    for r in records:
        by_cache[r.get("cache", "") + (f" run {r['run']}" if r.get("run") else "")].append(r)
    compiled = collections.defaultdict(dict)  # kernel name -> cache -> (hash, src_hash, fn_key, file)
    for cache, rs in by_cache.items():
        for r in rs:
            if r["ev"] == "triton":
                # A kernel is its name in its source file (names repeat across graphs).
                compiled[(r["name"], os.path.basename(r["file"] or ""))].setdefault(
                    cache, (r["hash"], r["src_hash"], r["fn_key"], r["file"]))
    for cache, rs in by_cache.items():
        ev = collections.Counter(r["ev"] for r in rs)
        reads = [r for r in rs if r["ev"] == "read_best"]
        found = [r for r in reads if r["exists"]]
        unused = [r for r in found if r["result"] is None]
        saves = [r for r in rs if r["ev"] == "save"]
        tr = [r for r in rs if r["ev"] == "triton"]
        misses = [r for r in tr if not r["hit"]]
        print(f"## {cache} ({len({r['pid'] for r in rs})} processes; {dict(ev)})")
        print(f"- autotune lookups {len(reads)}: .best_config found {len(found)}, found but not used {len(unused)},"
              f" saved {len(saves)} (coordesc {sum(1 for r in saves if r['found_by_coordesc'])})")
        for r in unused[:6]:
            stored = r["stored"] if isinstance(r["stored"], dict) else {}
            print(f"  - not used: {short(r['file'], cache)}: stored configs_hash {stored.get('configs_hash', '?')[:12]}"
                  f" vs {r['configs_hash'][:12]}, n_configs {r['n_configs']}, coordesc {r['coordesc']},"
                  f" stored {json.dumps({k: v for k, v in stored.items() if k not in ('configs_hash',)})[:200]}")
        for r in saves[:6]:
            print(f"  - saved: {short(r['file'], cache)}: {r['config'][:120]} coordesc={r['found_by_coordesc']}")
        populated = [r for r in rs if r["ev"] == "populate"]
        if populated:
            print(f"- .best_config written from loaded artifacts: {len(populated)}, e.g. {populated[0]['content'][:160]}")
        print(f"- Triton compiles {len(tr)}: {len(misses)} missed the cache")
        names = collections.Counter(r["name"] for r in misses)
        print(f"  - missed kernels: {names.most_common(8)}")
        same_key = [r for r in misses if any(v[0] == r["hash"] for c, v in
                    compiled[(r["name"], os.path.basename(r["file"] or ""))].items() if c != cache)]
        print(f"  - of them compiled under the same key in another run (the cache should have had them): {len(same_key)}")
        for r in misses[:8]:
            others = {c: v for c, v in compiled[(r["name"], os.path.basename(r["file"] or ""))].items() if c != cache}
            for other, (h, sh, fk, f) in list(others.items())[:1]:
                what = [n for n, a, b in (("src_hash", r["src_hash"], sh), ("fn_key", r["fn_key"], fk)) if a != b]
                print(f"  - {r['name']} {r.get('constants', '')[:80]} w{r.get('warps')} s{r.get('stages')}: key {r['hash'][:10]} here, {h[:10]} under {other}: differs in {what or 'options/env'};"
                      f" file {r['file']} vs {f}")
        if show_opens:
            opens = sorted({short(r["path"], cache) for r in rs if r["ev"] == "open"})
            print(f"- files opened: {len(opens)}")
            for o in opens:
                print(f"  - {o}")
    if show_opens:
        diff_opens(by_cache)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--opens"]
    main(args, "--opens" in sys.argv)
