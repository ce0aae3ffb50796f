#!/usr/bin/env bash
# Runs one golden CLI case (zstd-style): tests/cli/cases/<area>/<name>.sh runs
# in a fresh scratch directory with $PREWARM, $PREWARM_RUNTIME and $CASE_DIR
# (the case's directory, for fixtures) set. Expectations sit beside it:
#   <name>.exit           the exit status (default 0)
#   <name>.stdout         exact stdout            | <name>.stdout.glob  bash pattern over all of it
#   <name>.stderr         exact stderr            | <name>.stderr.glob
#   <name>.stdout.regex   every line is an extended regex that some line must match
#   <name>.stderr.regex
# Absent files are not checked. On a mismatch the runner prints the case, the
# expectation and what the program did.
set -u
case_file=$1
[[ -f $case_file ]] || { echo "no such case: $case_file" >&2; exit 2; }
export CASE_DIR
CASE_DIR=$(cd "$(dirname "$case_file")" && pwd)
case_file="$CASE_DIR/$(basename "$case_file")"
base=${case_file%.sh}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-cli-case.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

(cd "$scratch" && bash "$case_file") \
  >"$scratch.out" 2>"$scratch.err"
status=$?
out=$(cat "$scratch.out"; echo x); out=${out%x}
err=$(cat "$scratch.err"; echo x); err=${err%x}
rm -f "$scratch.out" "$scratch.err"

failed=0
report() {
  echo "FAIL $case_file: $1"
  failed=1
}
expected_exit=0
[[ -f $base.exit ]] && expected_exit=$(tr -d '[:space:]' <"$base.exit")
[[ $status == "$expected_exit" ]] || report "exit status $status, expected $expected_exit"

check_stream() {
  local name=$1 actual=$2
  if [[ -f $base.$name ]]; then
    local expected
    expected=$(cat "$base.$name"; echo x); expected=${expected%x}
    [[ $actual == "$expected" ]] || report "$name differs from $base.$name:
$(diff <(printf '%s' "$expected") <(printf '%s' "$actual"))"
  fi
  if [[ -f $base.$name.glob ]]; then
    local pattern
    pattern=$(cat "$base.$name.glob"; echo x); pattern=${pattern%x}
    # shellcheck disable=SC2053
    [[ $actual == $pattern ]] || report "$name does not match the pattern in $base.$name.glob"
  fi
  if [[ -f $base.$name.regex ]]; then
    while IFS= read -r regex || [[ -n $regex ]]; do
      [[ -z $regex ]] && continue
      grep -Eq -- "$regex" <<<"$actual" || report "no line of $name matches: $regex"
    done <"$base.$name.regex"
  fi
}
check_stream stdout "$out"
check_stream stderr "$err"
if ((failed)); then
  echo "---- stdout ----"; printf '%s' "$out"
  echo "---- stderr ----"; printf '%s' "$err"
  exit 1
fi
echo "ok $case_file"
