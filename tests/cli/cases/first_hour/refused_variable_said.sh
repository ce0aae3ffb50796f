# A bundle asking env/exec to export a variable beyond the allow list: inspect
# says the trust policy must name it; install says it will not be exported,
# on the first install and on every later one (a restart on a kept volume
# takes the fast path); a policy naming it lets it through, and the re-install
# that records that says so instead of "nothing written".
source "$CASE_DIR/lib.bash"; key
sed 's/      kinds: \[pocl\]/      kinds: [pocl]\n      runtime_env: {TOOL_EXPECT: "yes"}/' "$CASE_DIR/quick.yaml" >env.yaml
"$PREWARM" build env.yaml --key keys/test_only_first_hour.key --out b >/dev/null 2>&1 || exit 99
"$PREWARM" inspect b | grep -o 'policy   needs install.environment: \[TOOL_EXPECT\]'
install() { "$PREWARM_RUNTIME" install b --root root "$@" 2>&1 >out.txt | grep -o 'runtime env will not be exported: E_VARIABLE_NOT_ALLOWED: variable TOOL_EXPECT'; sed -E 's/serial [0-9]+/serial N/; s| under [^ ]*| under ROOT|; s/ in [0-9.]+ s$//' out.txt | head -n 1; }
install --trust keys/test_only_first_hour.pub
install --trust keys/test_only_first_hour.pub
printf 'version: 1\nkeys:\n  - file: keys/test_only_first_hour.pub\ninstall:\n  environment: [TOOL_EXPECT]\n' >policy.yaml
install --trust policy.yaml
"$PREWARM_RUNTIME" env --root root | grep TOOL_EXPECT
