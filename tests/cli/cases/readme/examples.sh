# The examples marked "<!-- checked example -->" in README.md and docs/**/*.md
# (in that order, in one scratch directory) are run and must match: a marked block of `console` lines runs each "$ command" (prewarm and
# prewarm-runtime on PATH, in a scratch directory with a development key in
# keys/dev as ./setup.sh makes) and compares stdout and stderr together with
# the lines that follow it; "<!-- checked example: NAME -->" writes the block
# to the file NAME first.
pages=("$PREWARM_SOURCE_DIR/README.md")
while IFS= read -r page; do pages+=("$page"); done < <(find "$PREWARM_SOURCE_DIR/docs" -name "*.md" | sort)
mkdir bin && ln -s "$PREWARM" bin/prewarm && ln -s "$PREWARM_RUNTIME" bin/prewarm-runtime
export PATH="$PWD/bin:$PATH"
unset PREWARM_OCLOC PREWARM_HOST_DEVICES PREWARM_PROGRESS PREWARM_PROGRESS_INTERVAL SOURCE_DATE_EPOCH
prewarm keygen --out keys/dev >/dev/null 2>&1 || exit 99
python3 - "$PREWARM_SOURCE_DIR" "${pages[@]}" <<'PY'
import re, subprocess, sys
import os
checked = failed = 0
for page in sys.argv[2:]:
  name = os.path.relpath(page, sys.argv[1])
  lines = open(page, encoding="utf-8").read().split("\n")
  i = 0
  while i < len(lines):
    marker = re.fullmatch(r"<!-- checked example(?::\s*(\S+))? -->", lines[i].strip())
    i += 1
    if not marker:
        continue
    while not lines[i].startswith("```"):
        i += 1
    start = i + 1
    end = start
    while not lines[end].startswith("```"):
        end += 1
    block = lines[start:end]
    i = end + 1
    if marker.group(1):
        open(marker.group(1), "w").write("\n".join(block) + "\n")
        continue
    # "$ command" then its expected output, up to the next "$ ".
    k = 0
    while k < len(block):
        command = block[k][2:]
        k += 1
        expected = []
        while k < len(block) and not block[k].startswith("$ "):
            expected.append(block[k])
            k += 1
        run = subprocess.run(["bash", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        actual = run.stdout.rstrip("\n").split("\n") if run.stdout.strip() else []
        checked += 1
        if actual != expected:
            failed += 1
            print(f"{name} line {start + 1}: $ {command}\n  expected:\n    " + "\n    ".join(expected) +
                  "\n  actual:\n    " + "\n    ".join(actual))
print(f"{checked} README commands checked, {failed} differ")
sys.exit(1 if failed or checked == 0 else 0)
PY
