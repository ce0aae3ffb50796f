# Not a terminal: a heartbeat line every PREWARM_PROGRESS_INTERVAL seconds
# (default 10) naming each running job, its time and its last complete,
# unindented log line (never a fragment); -q prints none.
source "$CASE_DIR/lib.bash"; key
build() { "$PREWARM" "$@" build "$CASE_DIR/slow.yaml" --key keys/test_only_first_hour.key --out b 2>&1 >/dev/null; }
PREWARM_PROGRESS_INTERVAL=0.3 build >err.txt || { cat err.txt; exit 1; }
grep -E '^prewarm: still running 1 job: cpu/slow \([0-9]+ s: compiling kernel [12] of 2\)$' err.txt | head -n 1 |
  sed -E 's/\([0-9]+ s/(N s/; s/kernel [12]/kernel N/'
echo "fragments shown: $(grep -c -E 'warnings\.warn|half a li\)' err.txt)"
PREWARM_PROGRESS_INTERVAL=0.3 build -q >quiet.txt || { cat quiet.txt; exit 1; }
echo "-q: $(wc -l <quiet.txt) lines"
PREWARM_PROGRESS_INTERVAL=0 build
echo "exit $?"
