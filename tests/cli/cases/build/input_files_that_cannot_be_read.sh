# A FIFO named as --key must not hang the build (nothing would ever write to
# it), and a key or manifest over its size limit is a usage error (exit 2,
# documented) like any other bad input, not a verification failure (3).
"$PREWARM" keygen --out keys/test_only_build >/dev/null 2>&1 || exit 99
mkfifo keys/test_only_fifo.key
timeout -s KILL 20 "$PREWARM" build "$CASE_DIR/tiny.yaml" --key keys/test_only_fifo.key --out b1 2>err1.txt
echo "fifo key: exit $?"
grep -c 'not a regular file (a FIFO)' err1.txt
head -c 20000 /dev/zero | tr '\0' 'k' >keys/test_only_big.key
chmod 600 keys/test_only_big.key
timeout -s KILL 20 "$PREWARM" build "$CASE_DIR/tiny.yaml" --key keys/test_only_big.key --out b2 2>err2.txt
echo "big key: exit $?"
grep -c 'over the limit' err2.txt
{ cat "$CASE_DIR/tiny.yaml"; head -c 5000000 /dev/zero | tr '\0' '#'; } >big.yaml
timeout -s KILL 20 "$PREWARM" build big.yaml --key keys/test_only_build.key --out b3 2>err3.txt
echo "big manifest: exit $?"
grep -c 'over the limit' err3.txt
