# Every output path is checked before a job runs; on failure nothing is
# written (no bundle, no log directory, no report) and the message says what
# to fix. A --json report in a directory that does not exist yet is fine: it
# is created, as the bundle's directory is.
source "$CASE_DIR/lib.bash"; key
mkdir notabundle; echo data >notabundle/file; echo text >plain.txt; mkdir reports
before=$(ls -AR)
run() { "$PREWARM" build "$CASE_DIR/quick.yaml" --key keys/test_only_first_hour.key "$@"; echo "exit $?"; }
run --out notabundle
run --out b --json reports
run --out b --json plain.txt/report.json
run --out b --log-dir plain.txt
run --out plain.txt/b
[ "$before" = "$(ls -AR)" ] && echo "nothing written"
run --out new/b --json out/report.json 2>/dev/null | sed 's/^[0-9a-f]\{64\}/SHA256/'
test -f out/report.json && test -f new/b/manifest && echo "report and bundle written into new directories"
