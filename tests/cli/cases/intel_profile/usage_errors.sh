# prewarm intel-profile refuses bad input before it loads a driver or builds
# anything: no --out, an --out whose directory is missing, a target that is
# not an Intel one, a driver root that is not one. Exit 2 each.
try() { "$@"; echo "exit $?" >&2; }
try "$PREWARM" intel-profile
try "$PREWARM" intel-profile --out no-such-dir/arc-b580.yaml
try "$PREWARM" intel-profile --out p.yaml --target cpu
try "$PREWARM" intel-profile --out p.yaml --target arc-b58
test -e p.yaml || echo "nothing written" >&2
