# PoCL needs a writable cache directory to report its device; a user without
# a usable HOME (`nobody`, HOME=/nonexistent) still has the CPU device found,
# by the runtime's install and by the builder's plan. As root the case runs as
# nobody; otherwise HOME names a file.
source "$CASE_DIR/lib.bash"; key
"$PREWARM" build "$CASE_DIR/quick.yaml" --key keys/test_only_first_hour.key --out b \
  >/dev/null 2>&1 || exit 99
chmod 755 . keys && mkdir -m 777 shared tmp
if [ "$(id -u)" = 0 ]; then
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent TMPDIR="$PWD/tmp")
else
  echo "not a directory" >home-file
  as_user=(env HOME="$PWD/home-file" TMPDIR="$PWD/tmp")
fi
unset POCL_CACHE_DIR XDG_CACHE_HOME
"${as_user[@]}" "$PREWARM_RUNTIME" install b --trust keys/test_only_first_hour.pub --root shared/root >out.txt 2>err.txt
echo "install: exit $?"
grep -o '^installed: channel ci/first-hour' out.txt
grep -E '^  slice cpu-[0-9a-f]+ for device 0 \(pthread' out.txt | sed -E 's/cpu-[0-9a-f]+ for device 0 .*/cpu-ID for device 0 (pthread...)/'
"${as_user[@]}" "$PREWARM" targets | grep -oE '^cpu +cpu +OpenCL CPU +(run|skip)' | sed -E 's/ +/ /g'
[ -z "$(ls -A tmp)" ] && echo "no private home left behind"
