# SIGTERM to `prewarm build` while a command workload runs: the command and
# everything it started (a setsid daemon included) are killed, the build's
# temporary directory is removed, and the build ends by that signal.
export TMPDIR=$PWD/tmp
mkdir tmp
"$PREWARM" keygen --out keys/test_only_build >/dev/null 2>&1 || exit 99
cat >m.yaml <<EOF
version: 1
models:
  - name: sleeper
    command:
      argv: [/bin/sh, -c, "setsid sleep 297.25 </dev/null >/dev/null 2>&1 & sleep 296.75 & touch $PWD/started; wait"]
precisions: [fp32]
targets: [cpu]
EOF
"$PREWARM" build m.yaml --key keys/test_only_build.key --out bundle 2>err.txt &
build=$!
for _ in $(seq 200); do [ -e started ] && break; sleep 0.1; done
[ -e started ] || { echo "the command never started"; cat err.txt; kill -9 $build; exit 98; }
sleep 0.3
kill -TERM $build
wait $build
echo "build: exit $?"
sleep 0.3
left=$(pgrep -f 'sleep 29(7\.25|6\.75)')
if [ -n "$left" ]; then echo "still running: the command"; kill -9 $left; else echo "the command was killed"; fi
echo "temporary directories left: $(find tmp -mindepth 1 -maxdepth 1 | wc -l)"
test -e bundle && echo "a bundle was written" || echo "no bundle"
