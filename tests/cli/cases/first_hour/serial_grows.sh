# The default serial is the build time (SOURCE_DATE_EPOCH, else the clock),
# stated by inspect and --show-config; installing an older serial, or another
# bundle with the same serial, says how to proceed.
source "$CASE_DIR/lib.bash"; key
build() { "$PREWARM" build "$@" --key keys/test_only_first_hour.key >/dev/null 2>&1 || echo "build $* failed"; }
SOURCE_DATE_EPOCH=1700000000 build "$CASE_DIR/quick.yaml" --out a --allow-expired
"$PREWARM" inspect a | grep '^serial '
start=$(date +%s)
build "$CASE_DIR/quick.yaml" --out clock
serial=$("$PREWARM" inspect clock | sed -n 's/^serial *\([0-9]*\).*/\1/p')
[ "$serial" -ge "$start" ] && [ "$serial" -le "$(date +%s)" ] && echo "without SOURCE_DATE_EPOCH: the clock"
SOURCE_DATE_EPOCH=1700000000 "$PREWARM" build "$CASE_DIR/quick.yaml" --show-config | grep -E ' (serial|issued-at) ' |
  sed -E 's/  +/ /'
"$PREWARM" build "$CASE_DIR/quick.yaml" --serial 9 --show-config | grep -E ' serial ' | sed -E 's/  +/ /'
# SOURCE_DATE_EPOCH 1700000000 is long past: --allow-expired writes and --expiry warn installs these anyway.
install() { "$PREWARM_RUNTIME" install "$1" --expiry warn --trust keys/test_only_first_hour.pub --root root >/dev/null 2>err.txt; echo "install $1: exit $?"; cat err.txt | grep error; }
install a
build "$CASE_DIR/quick.yaml" --out older --serial 5
install older
sed 's/channel: ci\/first-hour/channel: ci\/first-hour\n  expires: 8d/' "$CASE_DIR/quick.yaml" >other.yaml
SOURCE_DATE_EPOCH=1700000000 build other.yaml --out same-serial --allow-expired
install same-serial 2>&1 | sed -E 's/[0-9a-f]{64}/SHA256/g'
