#!/usr/bin/env python3
# Counts the lines of every function defined at namespace level in C++
# sources (the house style puts the name at column 0 and the braces of a
# definition at column 0: .clang-format AlwaysBreakAfterReturnType), and
# prints those longer than --over lines, longest first, as FILE:LINE NAME N.
# Exit status 1 when --max is given and a function is longer than it, unless
# --allow names it (PATH:NAME, PATH relative to the current directory, for a
# function whose cut is under way elsewhere; an allowed one that is no longer
# too long is only noted).
# Usage: long_functions.py [--over N] [--max N] [--max-file N] [--allow PATH:NAME]... [--files-over N] DIR...
import argparse
import os
import re
import sys

NAME = re.compile(r"^(?:[A-Za-z_][\w:<>,~ *&]*\s+)?([~A-Za-z_][\w:~<>]*(?:operator\S+)?)\s*\(")


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line[:1].isalpha() or line[:1] in "~_":
            m = NAME.match(line)
            if m and not line.rstrip().endswith(";") and not line.startswith(("namespace", "struct", "class", "enum", "using", "template", "typedef", "#", "extern")):
                # the body: the first line that is "{" at column 0 before a ";" at the end of a line
                j = i
                while j < len(lines) and lines[j] != "{" and not lines[j].rstrip().endswith(";"):
                    if lines[j].rstrip().endswith("{") and j > i and lines[j][:1] not in " \t}":
                        break
                    j += 1
                if j < len(lines) and lines[j] == "{":
                    k = j + 1
                    while k < len(lines) and not lines[k].startswith("}"):
                        k += 1
                    start = i
                    # the return type on the line above belongs to the definition
                    if i > 0 and lines[i - 1] and lines[i - 1][:1].isalpha() and not lines[i - 1].rstrip().endswith((";", "}", "{", ")")):
                        start = i - 1
                    found.append((m.group(1), i + 1, k - start + 1))
                    i = k
        i += 1
    return found


def sources(dirs):
    for d in dirs:
        for root, _, names in os.walk(d):
            for n in sorted(names):
                if n.endswith((".cpp", ".hpp", ".cc", ".h")):
                    yield os.path.join(root, n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--over", type=int, default=60)
    ap.add_argument("--max", type=int)
    ap.add_argument("--files-over", type=int, default=700)
    ap.add_argument("--max-file", type=int, help="fail on a file over N lines with its header")
    ap.add_argument("--allow", action="append", default=[])
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    rows, total_lines, long_files = [], 0, []
    stems = {}
    for path in sources(a.dirs):
        with open(path, encoding="utf-8", errors="replace") as f:
            n = f.read().count("\n")
        total_lines += n
        stems.setdefault(os.path.splitext(path)[0], []).append((path, n))
        if path.endswith((".cpp", ".cc")):
            rows += [(length, f"{path}:{line}", name) for name, line, length in functions(path)]
    for stem, parts in stems.items():
        together = sum(n for _, n in parts)
        if together > a.files_over:
            long_files.append((together, " + ".join(p for p, _ in parts)))
    rows.sort(reverse=True)
    over = [r for r in rows if r[0] > a.over]
    for length, where, name in over:
        print(f"{where} {name} {length}")
    for together, names in sorted(long_files, reverse=True):
        print(f"file {names} {together}")
    print(f"lines {total_lines}; functions over {a.over}: {len(over)}; files over {a.files_over} "
          f"(with their headers): {len(long_files)}")
    if a.max is None and a.max_file is None:
        return 0
    too_long = [(length, where, name) for length, where, name in rows if a.max is not None and length > a.max]
    allowed = set(a.allow)
    failing = []
    for length, where, name in too_long:
        key = f"{os.path.relpath(where.rsplit(':', 1)[0])}:{name}"
        if key in allowed:
            allowed.discard(key)
        else:
            failing.append(f"{where} {name}: {length} lines (at most {a.max})")
    for key in sorted(allowed):
        print(f"note: {key} is allowed but no longer over {a.max} lines: drop it from --allow")
    if a.max_file is not None:
        failing += [f"file {names}: {together} lines (at most {a.max_file})"
                    for together, names in long_files if together > a.max_file]
    for line in failing:
        print(line)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
