# --keep-going: a failed job is recorded and never packaged, the others are,
# and the build still exits 1 with "N of M jobs failed".
"$PREWARM" keygen --out keys/test_only_build >/dev/null 2>&1 || exit 99
sed -e 's/targets: \[cpu, arc-b580\]/targets: [cpu]/' -e 's/^precisions:/  - name: broken\n    command: {argv: [\/bin\/false]}\nprecisions:/' \
  "$CASE_DIR/tiny.yaml" >m.yaml
"$PREWARM" build m.yaml --key keys/test_only_build.key --out bundle --keep-going 2>stderr.txt
status=$?
grep -E '^prewarm: \[[12]/2\] FAILED  cpu/broken \(run\): ' stderr.txt >/dev/null && echo "failure reported"
tail -n 1 stderr.txt
"$PREWARM" inspect bundle | grep -E '^  job ' | sed 's/^ *//'
# Without --keep-going the first failure stops the build and nothing is written.
"$PREWARM" build m.yaml --key keys/test_only_build.key --out bundle2 >/dev/null 2>&1
echo "stop: exit $? $(test -e bundle2 && echo bundle2 written || echo no bundle2)"
exit $status
