# Every job's full log is kept beside the bundle (BUNDLE.logs/<job id>.log)
# or in --log-dir, and outlives the command; a failed job's "full log:" line
# names a file that exists.
source "$CASE_DIR/lib.bash"; key
sed 's/^precisions:/  - name: broken\n    command: {argv: ["echo compiling the broken kernel; exit 3"], shell: true}\nprecisions:/' \
  "$CASE_DIR/quick.yaml" >m.yaml
"$PREWARM" build m.yaml --key keys/test_only_first_hour.key --out out/b --keep-going 2>&1 >/dev/null |
  sed "s|$PWD/||g" >err.txt
echo "exit ${PIPESTATUS[0]}"
grep -E '^prewarm: (job logs|error)' err.txt
full_log=$(sed -n 's/.*full log: \([^ ]*\)$/\1/p' err.txt | head -n 1)
echo "full log: $full_log"
cat "$full_log"
find out/b.logs -type f | sort
# --log-dir puts them elsewhere.
"$PREWARM" build "$CASE_DIR/quick.yaml" --key keys/test_only_first_hour.key --out b2 --log-dir logs 2>&1 >/dev/null |
  sed "s|$PWD/||g" >err2.txt
echo "exit ${PIPESTATUS[0]}"
grep -E '^prewarm: job logs' err2.txt
untimed <logs/cpu/quick/fp32.log
