#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docker/entrypoint on the host, with prewarm-runtime from the build (the
# container test runs it in a real image; this one checks its variables
# cheaply, on every CI run):
#   1. a bundle built with --capture-root ROOT (a custom cache only, a shell
#      "application"): PREWARM_PATHS=root exports ROOT/custom/<name>, the
#      default exports the installed version's directory, and the
#      application reads the bundle's file through either;
#   2. PREWARM_PATHS=bogus stops with exit 2 before anything runs;
#   3. PREWARM_REGISTRY_TIMEOUT reaches the pull (a bad value is named), and
#      PREWARM_PLAIN_HTTP=1 to a registry off loopback is refused
#      (E_PLAIN_HTTP); with PREWARM_ON_FAILURE=warn the application starts
#      anyway, and the caches already installed stay.
# Env: PREWARM, PREWARM_RUNTIME, ENTRYPOINT.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${ENTRYPOINT:?}"
make_scratch entrypoint
root="$SCRATCH/root"
app="$SCRATCH/app.sh"
cat > "$app" <<'SH'
#!/bin/sh
# Reads its kernel from its cache, or makes it (the "compile").
mkdir -p "$CUPY_CACHE_DIR"
if [ -f "$CUPY_CACHE_DIR/kernel.bin" ]; then echo "dir=$CUPY_CACHE_DIR reused=$(cat "$CUPY_CACHE_DIR/kernel.bin")"
else echo built > "$CUPY_CACHE_DIR/kernel.bin"; echo "dir=$CUPY_CACHE_DIR built"; fi
SH
chmod +x "$app"
cat > "$SCRATCH/m.yaml" <<YAML
version: 1
models:
  - name: app
    command:
      argv: [$app]
      kinds: []
      caches: [{name: kernels, variable: CUPY_CACHE_DIR}]
precisions: [fp32]
targets: [cpu]
bundle:
  channel: test/entrypoint
YAML

step "build with --capture-root at the root the entrypoint installs into"
"$PREWARM" keygen --out "$SCRATCH/test_only_entry" > /dev/null 2>&1 || fail "keygen failed"
"$PREWARM" build "$SCRATCH/m.yaml" --capture-root "$root" --key "$SCRATCH/test_only_entry.key" \
  --out "$SCRATCH/bundle" > "$SCRATCH/build.out" 2>&1 || { cat "$SCRATCH/build.out" >&2; fail "build failed"; }
entry() { env PREWARM_BUNDLE="$SCRATCH/bundle" PREWARM_TRUST="$SCRATCH/test_only_entry.pub" PREWARM_ROOT="$root" \
  PREWARM_RUNTIME="$PREWARM_RUNTIME" "$@"; }

step "PREWARM_PATHS=root exports ROOT/custom/kernels; the default the version's directory"
out=$(entry PREWARM_PATHS=root sh "$ENTRYPOINT" "$app" 2> "$SCRATCH/e1.err") || { cat "$SCRATCH/e1.err" >&2; fail "entrypoint failed"; }
[ "$out" = "dir=$root/custom/kernels reused=built" ] || { cat "$SCRATCH/e1.err" >&2; fail "PREWARM_PATHS=root: got '$out'"; }
out=$(entry sh "$ENTRYPOINT" "$app" 2> "$SCRATCH/e2.err") || { cat "$SCRATCH/e2.err" >&2; fail "entrypoint failed"; }
case "$out" in
  "dir=$root/.prewarm/versions/"*"/custom/kernels reused=built") ;;
  *) fail "default paths: got '$out'" ;;
esac

step "a bad PREWARM_PATHS stops before anything runs"
expect_exit 2 entry PREWARM_PATHS=bogus sh "$ENTRYPOINT" "$app"
assert_stderr_contains "PREWARM_PATHS='bogus': expected 'version' or 'root'"

step "registry variables reach the pull; warn still starts the application"
ref="registry.example.invalid/prewarm/bundle@sha256:$(printf '%064d' 0)"
out=$(entry PREWARM_BUNDLE="$ref" PREWARM_REGISTRY_TIMEOUT=soon sh "$ENTRYPOINT" "$app" 2> "$SCRATCH/e3.err") \
  || { cat "$SCRATCH/e3.err" >&2; fail "the application did not start"; }
grep -q -- "--registry-timeout" "$SCRATCH/e3.err" || { cat "$SCRATCH/e3.err" >&2; fail "the bad timeout is not named"; }
case "$out" in *"reused=built") ;; *) fail "the installed caches did not stay: '$out'" ;; esac
out=$(entry PREWARM_BUNDLE="$ref" PREWARM_PLAIN_HTTP=1 PREWARM_REGISTRY_TIMEOUT=5s sh "$ENTRYPOINT" "$app" \
  2> "$SCRATCH/e4.err") || { cat "$SCRATCH/e4.err" >&2; fail "the application did not start"; }
grep -q "E_PLAIN_HTTP" "$SCRATCH/e4.err" || { cat "$SCRATCH/e4.err" >&2; fail "plain http off loopback not refused"; }
case "$out" in *"reused=built") ;; *) fail "the installed caches did not stay: '$out'" ;; esac
pass
