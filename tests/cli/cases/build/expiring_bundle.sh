# A bundle that would be expired, or expire within a day, when it is written
# is refused before any job runs, naming SOURCE_DATE_EPOCH and bundle.expires
# (a reproducible build on an old commit time would otherwise write a bundle
# every container refuses); --allow-expired writes it with a warning.
"$PREWARM" keygen --out keys/test_only_build >/dev/null 2>&1 || exit 99
sed -e 's/targets: \[cpu, arc-b580\]/targets: [cpu]/' "$CASE_DIR/tiny.yaml" >m.yaml
times() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z/TIME/g'; }
SOURCE_DATE_EPOCH=1700000000 "$PREWARM" build m.yaml --key keys/test_only_build.key --out old 2>err.txt
echo "expired: exit $? $(test -e old && echo written || echo not written)"
times <err.txt
# tiny.yaml expires 7d after issued-at: issued 6.5 days ago, it has half a day left.
SOURCE_DATE_EPOCH=$(( $(date +%s) - 6 * 86400 - 43200 )) "$PREWARM" build m.yaml --key keys/test_only_build.key \
  --out soon 2>err.txt
echo "expires soon: exit $? $(test -e soon && echo written || echo not written)"
times <err.txt
SOURCE_DATE_EPOCH=1700000000 "$PREWARM" build m.yaml --key keys/test_only_build.key --out old --allow-expired \
  >/dev/null 2>err.txt
echo "allowed: exit $? $(test -e old/manifest && echo written || echo not written)"
grep -F 'warning' err.txt | times
