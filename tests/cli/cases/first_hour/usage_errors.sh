# Every usage error, CLI11's included, is in prewarm's format
# ("<program>: error: E_CODE: what: why (hint)") and exits 2.
source "$CASE_DIR/lib.bash"; key
try() { "$@"; echo "exit $?" >&2; }
try "$PREWARM"
try "$PREWARM" frobnicate
try "$PREWARM" build --jobs 0
try "$PREWARM" build --jobs
try "$PREWARM" build nosuch.yaml --key keys/test_only_first_hour.key --out b
try "$PREWARM" build --out b
try "$PREWARM" build "$CASE_DIR/quick.yaml" --key keys/test_only_first_hour.pub --out b
try "$PREWARM" build "$CASE_DIR/quick.yaml" --key keys/nosuch.key --out b
try "$PREWARM_RUNTIME" install
try "$PREWARM_RUNTIME" status --root
test -e b || echo "nothing written" >&2
