#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The documentation checked against the code it describes.

  check_docs.py SOURCE_DIR errors        every E_ code the sources use is in docs/reference/errors.md,
                                         and every code there is still used
  check_docs.py SOURCE_DIR environment   every PREWARM_ variable the sources read is in
                                         docs/reference/environment.md
  check_docs.py SOURCE_DIR readme        README.md has at most 250 lines, and every figure in its
                                         table links to a results file that exists
  check_docs.py SOURCE_DIR blocks        every block marked <!-- file: PATH --> in README.md and
                                         docs/ equals PATH byte for byte (the examples CI builds)
  check_docs.py SOURCE_DIR reference PREWARM PREWARM_RUNTIME [--write]
                                         docs/reference/cli/ and the schema pages equal what the
                                         binaries and headers generate now (--write regenerates)

Exit 0 when the check holds, 1 with one line per difference otherwise.
"""
import os
import re
import subprocess
import sys
import tempfile

README_MAX_LINES = 250


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def source_files(root, dirs, suffixes):
    for d in dirs:
        for base, _, files in os.walk(os.path.join(root, d)):
            for name in sorted(files):
                if name.endswith(suffixes):
                    yield os.path.join(base, name)


def string_literals(path):
    """The string literals of a C++ file, comments left out (a code named in a comment is not used)."""
    text = read(path)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    literals = []
    for line in text.split("\n"):
        # Literals first, so that "//" inside one is not taken for a comment.
        code = re.sub(r'"(?:[^"\\]|\\.)*"', lambda m: literals.append(m.group(0)) or '""', line)
        if "//" in code:
            kept = code.split("//")[0].count('""')
            del literals[len(literals) - (code.count('""') - kept):]
    return literals


def table_first_column(path):
    names = set()
    for line in read(path).split("\n"):
        m = re.match(r"\|\s*`([A-Z][A-Z0-9_]+)`", line)
        if m:
            names.add(m.group(1))
        for extra in re.findall(r"`(PREWARM_[A-Z0-9_]+)`", line.split("|")[1] if line.startswith("|") else ""):
            names.add(extra)
    return names


def check_errors(root):
    used = {}
    for path in source_files(root, ["runtime", "prewarm"], (".cpp", ".hpp", ".h", ".c")):
        for literal in string_literals(path):
            for code in re.findall(r"\bE_[A-Z][A-Z0-9_]*\b", literal):
                used.setdefault(code, os.path.relpath(path, root))
    table = os.path.join(root, "docs/reference/errors.md")
    documented = table_first_column(table)
    problems = [f"{used[c]}: {c} is not in docs/reference/errors.md" for c in sorted(set(used) - documented)]
    problems += [f"docs/reference/errors.md: {c} is used nowhere in runtime/ or prewarm/"
                 for c in sorted(documented - set(used))]
    print(f"{len(used)} E_ codes used, {len(documented & set(used))} documented")
    return problems


def check_environment(root):
    used = {}
    files = list(source_files(root, ["runtime", "prewarm"], (".cpp", ".hpp", ".h", ".c")))
    for path in files:
        for literal in string_literals(path):
            for name in re.findall(r"\bPREWARM_[A-Z][A-Z0-9_]*\b", literal):
                used.setdefault(name, os.path.relpath(path, root))
    entrypoint = os.path.join(root, "docker/entrypoint")
    for name in re.findall(r"\$\{?(PREWARM_[A-Z][A-Z0-9_]*)", read(entrypoint)):
        used.setdefault(name, "docker/entrypoint")
    documented = table_first_column(os.path.join(root, "docs/reference/environment.md"))
    problems = [f"{used[n]}: {n} is not in docs/reference/environment.md" for n in sorted(set(used) - documented)]
    print(f"{len(used)} PREWARM_ variables read, {len(documented & set(used))} documented")
    return problems


def check_readme(root):
    lines = read(os.path.join(root, "README.md")).split("\n")
    problems = []
    count = len(lines) - (1 if lines[-1] == "" else 0)
    if count > README_MAX_LINES:
        problems.append(f"README.md: {count} lines, more than {README_MAX_LINES} (the rest belongs in docs/)")
    figures = 0
    for number, line in enumerate(lines, 1):
        if not line.startswith("|") or re.fullmatch(r"\|[-| :]+\|", line.strip()):
            continue
        for cell in line.strip().strip("|").split("|")[1:]:
            if not re.search(r"\d", cell):
                continue
            figures += 1
            links = re.findall(r"\]\(([^)#\s]+)", cell)
            if not links:
                problems.append(f"README.md:{number}: figure '{cell.strip()}' links to no results file")
            for link in links:
                if not os.path.isfile(os.path.join(root, link)):
                    problems.append(f"README.md:{number}: figure '{cell.strip()}' links to {link}, which does not exist")
                elif not link.startswith(("bench/results/", "docs/")):
                    problems.append(f"README.md:{number}: figure '{cell.strip()}' links to {link}, not a results file")
    print(f"README.md: {count} lines, {figures} figures in tables")
    return problems


def marked_blocks(path):
    """(line, file, block text) for each fenced block after a <!-- file: PATH --> line."""
    lines = read(path).split("\n")
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"<!-- file: (\S+) -->", lines[i].strip())
        i += 1
        if not m:
            continue
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        yield start, m.group(1), "\n".join(lines[start:end]) + "\n"
        i = end + 1


def check_blocks(root):
    problems = []
    pages = [os.path.join(root, "README.md")] + list(source_files(root, ["docs"], (".md",)))
    count = 0
    for page in pages:
        for line, name, block in marked_blocks(page):
            count += 1
            target = os.path.join(root, name)
            where = f"{os.path.relpath(page, root)}:{line}"
            if not os.path.isfile(target):
                problems.append(f"{where}: the block shows {name}, which does not exist")
            elif read(target) != block:
                problems.append(f"{where}: the block differs from {name} (the guide shows the file verbatim)")
    print(f"{count} documented files checked against the repository")
    return problems


def leading_comment(path):
    """The comment block a header opens with, its SPDX line left out: the format it specifies."""
    out = []
    for line in read(path).split("\n"):
        if not line.startswith("//"):
            break
        if "SPDX-License-Identifier" in line:
            continue
        out.append(line[3:] if line.startswith("// ") else line[2:])
    return "\n".join(out).rstrip() + "\n"


GENERATED = "<!-- generated by tests/docs/check_docs.py reference --write; edit the source it names, not this page -->"

SCHEMA_PAGES = {
    "manifest.md": ("The build manifest", "prewarm/manifest/manifest.hpp",
                    "What `prewarm build` reads. `prewarm plan MANIFEST` checks one in a second."),
    "trust-policy.md": ("The trust policy", "runtime/bundle/trust_policy.hpp",
                        "What an image trusts: `prewarm-runtime install --trust POLICY.yaml`."),
    "bundle-manifest.md": ("The signed bundle manifest", "runtime/bundle/bundle_manifest.hpp",
                           "The `manifest` file of a bundle, as `prewarm inspect` shows it."),
}


def run_help(binary, *args):
    result = subprocess.run([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{binary} {' '.join(args)} exited {result.returncode}:\n{result.stdout}")
    return result.stdout


def generate_reference(root, binaries):
    pages = {}
    index = ["# Command reference", "", GENERATED, "",
             "One page per subcommand, from its `--help` (the CLI definitions). The man pages",
             "`prewarm-SUBCOMMAND(1)` and `prewarm-runtime-SUBCOMMAND(1)` say the same and ship in the runtime image.", ""]
    for binary in binaries:
        program = os.path.basename(binary)
        index += [f"## {program}", "", "```text", run_help(binary, "--help").rstrip(), "```", ""]
        for sub in run_help(binary, "completion", "commands").split():
            text = run_help(binary, sub, "--help")
            summary = text.split("\n", 1)[0]
            name = f"{program}-{sub}.md"
            pages[f"cli/{name}"] = f"# {program} {sub}\n\n{GENERATED}\n\n```text\n{text.rstrip()}\n```\n\n" \
                                   f"Common flags: `{program} --help` ([index](README.md)). Exit codes and every " \
                                   f"`E_` code: [errors](../errors.md).\n"
            index.append(f"- [`{program} {sub}`]({name}): {summary}")
        index.append("")
    pages["cli/README.md"] = "\n".join(index)
    for page, (title, header, lead) in SCHEMA_PAGES.items():
        pages[page] = f"# {title}\n\n{GENERATED}\n\n{lead} From the grammar comment of `{header}`:\n\n" \
                      f"```text\n{leading_comment(os.path.join(root, header))}```\n"
    return pages


def check_reference(root, binaries, write):
    pages = generate_reference(root, binaries)
    reference = os.path.join(root, "docs/reference")
    problems = []
    if write:
        os.makedirs(os.path.join(reference, "cli"), exist_ok=True)
        for old in os.listdir(os.path.join(reference, "cli")):
            if f"cli/{old}" not in pages:
                os.remove(os.path.join(reference, "cli", old))
        for name, text in pages.items():
            with open(os.path.join(reference, name), "w", encoding="utf-8") as f:
                f.write(text)
    for name, text in sorted(pages.items()):
        path = os.path.join(reference, name)
        if not os.path.isfile(path):
            problems.append(f"docs/reference/{name} is missing")
        elif read(path) != text:
            problems.append(f"docs/reference/{name} differs from what the code generates")
    cli = os.path.join(reference, "cli")
    for name in sorted(os.listdir(cli)) if os.path.isdir(cli) else []:
        if f"cli/{name}" not in pages:
            problems.append(f"docs/reference/cli/{name} documents a subcommand that no longer exists")
    if problems:
        problems.append("regenerate: tests/docs/check_docs.py . reference BUILD/prewarm/cli/prewarm "
                        "BUILD/runtime/cli/prewarm-runtime --write")
    print(f"{len(pages)} generated reference pages compared")
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    root, what = argv[1], argv[2]
    checks = {"errors": check_errors, "environment": check_environment, "readme": check_readme,
              "blocks": check_blocks}
    if what in checks:
        problems = checks[what](root)
    elif what == "reference" and len(argv) >= 5:
        problems = check_reference(root, argv[3:5], "--write" in argv[5:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
