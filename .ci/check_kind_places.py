#!/usr/bin/env python3
# Where the source names a cache kind: a CacheKind::<kind> or a string
# literal that is exactly a kind's name ("pocl"), outside comments, in
# runtime/ and prewarm/. Every such file must be listed in ARCHITECTURE.md's
# recipe for a new cache kind (between the lines "<!-- kind places -->" and
# "<!-- /kind places -->", one `path` per item), and every listed file must
# still name a kind: a new kind is then one row in each table, and whoever
# adds a branch on a kind's name elsewhere adds it to the recipe, in view.
# The kinds are read from the CacheKind enum itself.
# Usage: check_kind_places.py SOURCE_DIR   (exit 1 and a list when they differ)
import os
import re
import sys


def kinds(root):
    text = open(os.path.join(root, "runtime/bundle/cache_kind.hpp"), encoding="utf-8").read()
    body = text[text.index("enum class CacheKind {"):]
    body = body[: body.index("};")]
    return re.findall(r"^\s+([a-z_]+),", body, re.M)


def places(root, names):
    pattern = re.compile(r'CacheKind::(?:%s)\b|"(?:%s)"' % ("|".join(names), "|".join(names)))
    found = {}
    for top in ("runtime", "prewarm"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root)
                for number, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    code = line.split("//", 1)[0]
                    if pattern.search(code):
                        found.setdefault(relative, number)
    return found


def listed(root):
    text = open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8").read()
    start = text.index("<!-- kind places -->")
    end = text.index("<!-- /kind places -->")
    return set(re.findall(r"`((?:runtime|prewarm)/[^`]+\.[ch]pp)`", text[start:end]))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    names = kinds(root)
    found = places(root, names)
    documented = listed(root)
    problems = []
    for path in sorted(set(found) - documented):
        problems.append(f"{path}:{found[path]}: names a cache kind; list it in ARCHITECTURE.md's recipe for a new kind, "
                        f"or ask a table column instead")
    for path in sorted(documented - set(found)):
        problems.append(f"ARCHITECTURE.md lists {path}, which names no cache kind any more")
    for p in problems:
        print(p)
    print(f"{len(names)} kinds; {len(found)} files name one; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
