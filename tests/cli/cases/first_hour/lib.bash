# Helpers for the first-hour cases (sourced).
key() { "$PREWARM" keygen --out keys/test_only_first_hour >/dev/null 2>&1 || exit 99; }
# "prewarm: [1/1] ..." lines carry timings; keep the words.
untimed() { sed -E 's/[0-9]+\.[0-9]+ s/N s/g'; }
