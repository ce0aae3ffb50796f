# On a terminal (a pty from script(1)): a live line per running job with its
# elapsed time and what it is doing, redrawn in place, erased when the job
# ends; log lines print above it.
source "$CASE_DIR/lib.bash"; key
cat >run.sh <<SH
PREWARM_PROGRESS_INTERVAL=0.2 "$PREWARM" build "$CASE_DIR/slow.yaml" --key keys/test_only_first_hour.key --out b >/dev/null
SH
TERM=xterm script -qefc "bash run.sh" typescript.txt >/dev/null 2>&1 || { cat typescript.txt; exit 1; }
tr '\r' '\n' <typescript.txt | sed 's/\x1b\[[0-9]*A//g; s/\x1b\[J//g' >screen.txt
grep -E '^  +[0-9]+\.[0-9] s  cpu/slow: compiling kernel 2 of 2$' screen.txt | head -n 1 |
  sed -E 's/[0-9]+\.[0-9] s/N s/'
grep -c $'\x1b\\[J' typescript.txt | awk '$1 > 2 { print "redrawn in place" }'
grep -E '^prewarm: \[1/1\] ok +cpu/slow' screen.txt >/dev/null && echo "job report printed"
