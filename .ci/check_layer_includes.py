#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every #include "x/..." of a layer names a header of a target the layer links.

Layers are CMake targets (ARCHITECTURE.md). A builder target's own include root
(cmake/PrewarmIncludeRoot.cmake) already makes most wrong-way includes fail to
compile; this check also covers the runtime (whose targets share the root
runtime/), headers reached through a shared root, and a header that compiles
only because something else happens to include it first.

For every library and executable under runtime/ and prewarm/ it reads the
CMake file API's code model of BUILD_DIR: the target's sources, its include
directories and the targets it depends on. Each header is owned by the
target that compiles the .cpp of the same name beside it, or else by the
target(s) whose sources share its directory. A source (or a header the
target owns) may include a header only if the header's owner is the target
itself or one it links, directly or transitively. Every violation is printed
as FILE:LINE; the exit status is 1 if there is one.

Usage: check_layer_includes.py BUILD_DIR [--graph]
  --graph  also print the layers ranked top to bottom, the layer graph
           (project targets only, transitive reduction) and the include edges
           actually used.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# Includes the link graph cannot express, each with the reason.
ALLOWED = {
    # The record format names opencl::DeviceRef (a plain struct) in one
    # signature; its position-independent twin for the OpenCL layer cannot link
    # the non-PIC prewarm_opencl, and calls nothing of it.
    ("prewarm_program_record_pic", "prewarm_opencl"),
}


def load_codemodel(build):
    reply = build / ".cmake/api/v1/reply"
    if not reply.is_dir() or not list(reply.glob("index-*.json")):
        # The top-level CMakeLists.txt writes the query; CMake answers it from
        # the next configure on.
        subprocess.run(["cmake", str(build)], check=True, stdout=subprocess.DEVNULL)
    index = json.loads(max(reply.glob("index-*.json")).read_text())
    codemodel_file = None
    # Shared queries answer at the top level, client queries one level down.
    for response in [*index["reply"].values(), *(r for c in index["reply"].values() if isinstance(c, dict)
                                                  for r in c.values())]:
        if isinstance(response, dict) and response.get("kind") == "codemodel":
            codemodel_file = response["jsonFile"]
    if codemodel_file is None:
        sys.exit(f"check_layer_includes: no code model in {reply} (configure {build} again)")
    codemodel = json.loads((reply / codemodel_file).read_text())
    source_root = Path(codemodel["paths"]["source"])
    configuration = codemodel["configurations"][0]
    targets = {}
    for entry in configuration["targets"]:
        targets[entry["id"]] = json.loads((reply / entry["jsonFile"]).read_text())
    return source_root, targets


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    show_graph = "--graph" in sys.argv
    build = Path(args[0]).resolve()
    source_root, by_id = load_codemodel(build)
    layered = ("runtime/", "prewarm/")

    names = {tid: t["name"] for tid, t in by_id.items()}
    # Project libraries and executables whose sources live under runtime/ or prewarm/.
    layers = {}
    for tid, t in by_id.items():
        if t["type"] not in ("STATIC_LIBRARY", "SHARED_LIBRARY", "EXECUTABLE", "OBJECT_LIBRARY"):
            continue
        sources = [s["path"] for s in t.get("sources", []) if not s.get("isGenerated")]
        if sources and all(s.startswith(layered) for s in sources):
            layers[tid] = t

    def closure(tid):
        seen, todo = set(), [tid]
        while todo:
            for dep in by_id[todo.pop()].get("dependencies", []):
                if dep["id"] not in seen:
                    seen.add(dep["id"])
                    todo.append(dep["id"])
        return {names[d] for d in seen}

    # Owners: the .cpp of the same stem beside a header, else its directory.
    by_stem, by_dir = {}, {}
    for tid, t in layers.items():
        for s in t["sources"]:
            path = Path(s["path"])
            if path.suffix == ".cpp":
                by_stem.setdefault(str(path.with_suffix(".hpp")), set()).add(t["name"])
                by_dir.setdefault(str(path.parent), set()).add(t["name"])

    def owners(header):
        return by_stem.get(header) or by_dir.get(str(Path(header).parent), set())

    # Every spelling under every include directory of the project -> header
    # (relative to the source root), following the include roots' links.
    spelled = {}
    for t in layers.values():
        for group in t.get("compileGroups", []):
            for inc in group.get("includes", []):
                root = Path(inc["path"])
                if inc.get("isSystem") or not (
                    str(root).startswith(str(source_root)) or str(root).startswith(str(build))
                ):
                    continue
                for dirpath, _, files in os.walk(root, followlinks=True):
                    for f in files:
                        if f.endswith(".hpp"):
                            full = Path(dirpath) / f
                            real = full.resolve()
                            if real.is_relative_to(source_root):
                                spelled.setdefault(str(full.relative_to(root)), str(real.relative_to(source_root)))

    problems, edges = [], {}
    for tid, t in sorted(layers.items(), key=lambda kv: kv[1]["name"]):
        me = t["name"]
        allowed = closure(tid) | {me}
        files = [s["path"] for s in t["sources"]]
        for directory in {str(Path(f).parent) for f in files}:
            for header in sorted((source_root / directory).glob("*.hpp")):
                relative = str(header.relative_to(source_root))
                if me in owners(relative):
                    files.append(relative)
        for path in sorted(set(files)):
            text = (source_root / path).read_text(errors="replace").splitlines()
            for number, line in enumerate(text, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                spelling = match.group(1)
                where = f"{path}:{number}"
                if ".." in Path(spelling).parts:
                    problems.append(f'{where}: #include "{spelling}" climbs out of its directory; '
                                    "name the header from its layer's include root")
                    continue
                if "/" not in spelling:
                    continue  # a header beside the source: the same layer
                # The compiler looks beside the including file first: "ops/x.hpp"
                # from prewarm/engine/ reaches into the layer above.
                beside = Path(path).parent / spelling
                header = str(beside) if (source_root / beside).is_file() else spelled.get(spelling)
                if header is None:
                    continue  # not a project header (CL/cl.h, level_zero/ze_api.h, ...)
                owned_by = owners(header)
                if not owned_by or me in owned_by:
                    continue
                if owned_by & allowed:
                    for owner in owned_by & allowed:
                        edges.setdefault(me, set()).add(owner)
                    continue
                if any((me, o) in ALLOWED for o in owned_by):
                    continue
                problems.append(f'{where}: #include "{spelling}" is a header of {" or ".join(sorted(owned_by))}, '
                                f"which {me} does not link")

    if show_graph:
        # Ranked: a target sits one row above the highest target it links, so
        # every arrow points down; runtime/ and prewarm/ side by side.
        layer_names = {t["name"] for t in layers.values()}
        direct = {t["name"]: sorted({names[d["id"]] for d in t.get("dependencies", [])} & layer_names - {t["name"]})
                  for t in layers.values()}
        half = {t["name"]: t["paths"]["source"].split("/")[0] for t in layers.values()}
        rank = {}

        def rank_of(name, trail=()):
            if name in trail:
                sys.exit(f"check_layer_includes: link cycle: {' -> '.join(trail + (name,))}")
            if name not in rank:
                rank[name] = 1 + max((rank_of(d, trail + (name,)) for d in direct[name]), default=-1)
            return rank[name]

        for name in direct:
            rank_of(name)
        print("# layers, top to bottom: a target links only targets on lower rows")
        rows = [{h: " ".join(sorted(n.removeprefix("prewarm_") for n in rank if rank[n] == r and half[n] == h))
                 for h in ("runtime", "prewarm")} for r in range(max(rank.values()), -1, -1)]
        width = max(len(row["runtime"]) for row in rows) + 2
        print(f"{'':3} {'runtime/':{width}} prewarm/")
        for r, row in zip(range(len(rows) - 1, -1, -1), rows):
            print(f"{r:>2}  {row['runtime']:{width}} {row['prewarm']}".rstrip())
        # The code model lists every target a target links, transitively;
        # drop what another of its dependencies already brings.
        print("# layer graph: target -> project targets it links (transitive reduction)")
        for name in sorted(direct):
            implied = {i for d in direct[name] for i in direct[d]}
            print(f"{name} -> {' '.join(d for d in direct[name] if d not in implied)}")
        print("# include edges used: target -> targets whose headers it includes")
        for me in sorted(edges):
            print(f"{me} -> {' '.join(sorted(edges[me]))}")

    for problem in problems:
        print(problem)
    if problems:
        print(f"check_layer_includes: {len(problems)} include(s) against the link graph", file=sys.stderr)
        return 1
    print(f"check_layer_includes: {len(layers)} targets, every include follows the link graph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
