# An install root this user may not write is E_IO with a hint; as root, the
# case runs the runtime as `nobody` (setpriv) to have one.
source "$CASE_DIR/lib.bash"; key
"$PREWARM" build "$CASE_DIR/quick.yaml" --key keys/test_only_first_hour.key --out b \
  >/dev/null 2>&1 || exit 99
mkdir locked && chmod 555 locked
chmod 755 . keys
as_other=()
if [ "$(id -u)" = 0 ]; then
  as_other=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  uid=$(id -u nobody)
else
  uid=$(id -u)
fi
"${as_other[@]}" "$PREWARM_RUNTIME" install b --trust keys/test_only_first_hour.pub --root locked/root 2>&1 >/dev/null |
  sed "s|$PWD/||g; s/uid $uid/uid UID/g; s/chown $uid/chown UID/g"
echo "exit ${PIPESTATUS[0]}"
