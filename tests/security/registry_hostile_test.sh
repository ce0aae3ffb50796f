#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Container start and push against a hostile registry (hostile_registry.py on
# 127.0.0.1, plain http through --plain-http; 127.0.0.2 plays "another host"),
# and a real docker-registry on localhost over plain http. Every case is
# bounded (the configured deadline + 5 s), ends with a named error code, and
# leaves the caches installed before byte-identical:
#   trickled manifest / slice, an endless error body, a registry that never
#   answers (E_REGISTRY_DEADLINE; --on-failure warn starts on the old caches)
#   a blob redirected to another host that asks for credentials, a push whose
#   upload Location is on another host (no Authorization leaves the registry:
#   E_AUTH), a token with CR/LF (E_AUTH_TOKEN, no header injected)
#   referrers: another image's bundle (E_REFERRER_SUBJECT), a flood of bogus
#   ones (E_REFERRERS_LIMIT after the newest 16), an oversized index (E_LIMIT)
#   the download directory: symlinks, hard links, a FIFO, a directory where a
#   partial download goes: removed, the pull completes, nothing outside changes
#   references: a tag (E_UNPINNED), sha512 (E_REFERENCE); --plain-http for a
#   remote host (E_PLAIN_HTTP): all exit 2 before any network
# About 40 s; every command runs under `timeout`.
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${MAKE_TEST_BUNDLE:?}"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../integration/lib.sh"
source "$here/../integration/registry/registry_lib.sh"

python3 -c 'import socket; socket.socket().bind(("127.0.0.2", 0))' 2>/dev/null ||
  skip "127.0.0.2 cannot be bound (no loopback /8)"
make_scratch registry-hostile
server_pid=""
trap 'stop_all_registries; [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true; rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH"
t0=$(date +%s)
bounded() { timeout --kill-after=5 60 "$@"; }
# within SECONDS CMD...: CMD's stderr in LAST_STDERR, its exit status in RC,
# failing when it took longer than SECONDS.
within() {
  local limit=$1 s0 err; shift
  s0=$(date +%s.%N); err=$(mktemp); RC=0
  timeout --kill-after=2 "$((limit + 20))" "$@" 2> "$err" || RC=$?
  LAST_STDERR=$(cat "$err"); rm -f "$err"
  ELAPSED=$(echo "$(date +%s.%N) - $s0" | bc)
  echo "figure: $(printf '%.1f' "$ELAPSED") s, exit $RC: ${*:1:3}"
  if [ "$(echo "$ELAPSED > $limit" | bc)" = 1 ]; then echo "$LAST_STDERR" >&2; fail "took $ELAPSED s (> $limit s)"; fi
}
expect_rc() { [ "$RC" -eq "$1" ] || { echo "$LAST_STDERR" >&2; fail "exit $RC, expected $1"; }; }
cache_hash() { (cd "$1" && find . -path ./.prewarm/downloads -prune -o -print0 | LC_ALL=C sort -z |
  xargs -0 sh -c 'for f; do if [ -f "$f" ]; then sha256sum "$f"; else echo "$f"; fi; done' sh | sha256sum); }
set_mode() { echo "$*" > mode; }
log_count() { python3 - "$@" <<'PY'
import json, sys
log, key, value = sys.argv[1], sys.argv[2], sys.argv[3]
cond = sys.argv[4:]  # extra key=value filters
n = 0
for line in open(log):
    e = json.loads(line)
    if str(e.get(key)) != value:
        continue
    if all(str(e.get(k)) == v for k, v in (c.split("=", 1) for c in cond)):
        n += 1
print(n)
PY
}

step "keys, bundles serial 1 and 2 (one cpu slice of 256 KiB each), OCI layouts, two images"
"$PREWARM" keygen --out keys/test_only_hostile > /dev/null
mkdir -p tree/pocl && head -c $((256 * 1024)) /dev/urandom > tree/pocl/cpu.bin
"$MAKE_TEST_BUNDLE" keys/test_only_hostile.key bundle1 1 cpu:cpu:tree > /dev/null
"$MAKE_TEST_BUNDLE" keys/test_only_hostile.key bundle2 2 cpu:cpu:tree > /dev/null
mkdir -p tree3/pocl && head -c 4096 /dev/urandom > tree3/pocl/cpu.bin # not in the registry: a push uploads it
"$MAKE_TEST_BUNDLE" keys/test_only_hostile.key bundle3 3 cpu:cpu:tree3 > /dev/null
trust=keys/test_only_hostile.pub
echo '[{"description": "test_only cpu host", "vendor": "cpu"}]' > host.json
export PREWARM_HOST_DEVICES=$PWD/host.json
d1=$(bounded "$PREWARM" push bundle1 oci:L1 2> /dev/null)
d2=$(bounded "$PREWARM" push bundle2 oci:L2 2> /dev/null)
mkdir -p images/blobs/sha256
image_manifest() {
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[],"annotations":{"name":"%s"}}' "$1"
}
img_a=$(image_manifest a | sha256sum | cut -d' ' -f1); image_manifest a > "images/blobs/sha256/$img_a"
img_b=$(image_manifest b | sha256sum | cut -d' ' -f1); image_manifest b > "images/blobs/sha256/$img_b"
set_mode ok
python3 "$here/hostile_registry.py" mode requests.log ports L1 L2 L3 images 2> server.err & server_pid=$!
wait_for_file ports
read -r P Q < ports
R=127.0.0.1:$P
write_docker_config "$SCRATCH/docker" tester test_only_secret "$R"
export DOCKER_CONFIG=$SCRATCH/docker
ref1=$R/bundles/app@$d1
ref2=$R/bundles/app@$d2
net=(--plain-http --retries 2)

step "previous caches: bundle 1 installed from the well-behaved registry"
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root prev "${net[@]}"
before=$(cache_hash prev)
unchanged() { [ "$(cache_hash prev)" = "$before" ] || fail "the previous caches changed"; }

step "references: a tag is E_UNPINNED, sha512 E_REFERENCE, --plain-http to a remote host E_PLAIN_HTTP (exit 2)"
expect_exit 2 bounded "$PREWARM_RUNTIME" install "$R/bundles/app:v1" --trust "$trust" --root prev "${net[@]}"
assert_stderr_contains E_UNPINNED
expect_exit 2 bounded "$PREWARM_RUNTIME" install "$R/bundles/app@sha512:$(printf 'ab%.0s' $(seq 64))" --trust "$trust" \
  --root prev "${net[@]}"
assert_stderr_contains E_REFERENCE
expect_exit 2 bounded "$PREWARM_RUNTIME" install "registry.example/bundles/app@$d2" --trust "$trust" --root prev --plain-http
assert_stderr_contains E_PLAIN_HTTP
expect_exit 2 bounded "$PREWARM" push bundle2 registry.example/bundles/app:v2 --plain-http
assert_stderr_contains E_PLAIN_HTTP
unchanged

step "deadline: a trickled manifest; --on-failure warn starts on the previous caches within 3 s + 5"
set_mode drip-manifest
within 8 "$PREWARM_RUNTIME" install "$ref2" --trust "$trust" --root prev "${net[@]}" --registry-timeout 3s --on-failure warn
expect_rc 0; assert_stderr_contains E_REGISTRY_DEADLINE; unchanged

step "deadline: a trickled slice (exit 1)"
set_mode drip-slice
within 8 "$PREWARM_RUNTIME" install "$ref2" --trust "$trust" --root prev "${net[@]}" --registry-timeout 3s
expect_rc 1; assert_stderr_contains E_REGISTRY_DEADLINE; unchanged

step "deadline: a registry that never answers; --on-failure warn"
set_mode hang
within 8 "$PREWARM_RUNTIME" install "$ref2" --trust "$trust" --root prev "${net[@]}" --registry-timeout 3s --on-failure warn
expect_rc 0; assert_stderr_contains E_REGISTRY_DEADLINE; unchanged

step "an endless error body is read only up to the excerpt kept"
set_mode endless-error
within 10 "$PREWARM_RUNTIME" install "$ref2" --trust "$trust" --root prev "${net[@]}" --registry-timeout 5s
expect_rc 1; assert_stderr_contains "HTTP 500"; unchanged

step "push: a registry that never answers is given up at --registry-timeout"
set_mode hang
within 8 "$PREWARM" push bundle2 "$R/bundles/app:v2" --plain-http --registry-timeout 3s
expect_rc 1; assert_stderr_contains E_REGISTRY_DEADLINE

step "a blob redirected to another host asking for credentials: none sent there (E_AUTH)"
: > requests.log
set_mode redirect-other basic
within 10 "$PREWARM_RUNTIME" install "$ref2" --trust "$trust" --root prev "${net[@]}" --registry-timeout 5s
expect_rc 1; assert_stderr_contains E_AUTH; unchanged
[ "$(log_count requests.log host 127.0.0.1 authorization=True)" -gt 0 ] || fail "the registry never got credentials"
[ "$(log_count requests.log host 127.0.0.2)" -gt 0 ] || fail "the redirect was not followed"
[ "$(log_count requests.log host 127.0.0.2 authorization=True)" -eq 0 ] || fail "credentials went to another host"

step "push: an upload Location on another host gets no Authorization"
: > requests.log
set_mode upload-other basic
within 10 "$PREWARM" push bundle3 "$R/bundles/app:v3" --plain-http --registry-timeout 5s --retries 1
expect_rc 1; assert_stderr_contains E_AUTH
[ "$(log_count requests.log host 127.0.0.2 method=PUT)" -gt 0 ] || fail "no upload reached the other host"
[ "$(log_count requests.log host 127.0.0.2 authorization=True)" -eq 0 ] || fail "Authorization went to another host"

step "a token with CR/LF is refused (E_AUTH_TOKEN), no header injected"
: > requests.log
set_mode crlf-token
within 10 "$PREWARM_RUNTIME" install "$ref2" --trust "$trust" --root prev "${net[@]}" --registry-timeout 5s
expect_rc 1; assert_stderr_contains E_AUTH_TOKEN; unchanged
[ "$(log_count requests.log injected True)" -eq 0 ] || fail "a header was injected"

step "referrers: the bundle of image B installs for B, is refused for A (E_REFERRER_SUBJECT)"
set_mode ok
bounded "$PREWARM" push bundle2 oci:L3 --subject "$R/bundles/app@sha256:$img_b" --plain-http > /dev/null
within 10 "$PREWARM_RUNTIME" install --referrer-of "$R/bundles/app@sha256:$img_b" --trust "$trust" --root refroot \
  "${net[@]}" --registry-timeout 5s
expect_rc 0
set_mode referrers-all
within 10 "$PREWARM_RUNTIME" install --referrer-of "$R/bundles/app@sha256:$img_a" --trust "$trust" --root prev \
  "${net[@]}" --registry-timeout 5s
expect_rc 3; assert_stderr_contains E_REFERRER_SUBJECT; unchanged

step "referrers: 200 bogus ones: the newest 16 tried (E_REFERRERS_LIMIT); 3,000: the index is refused (E_LIMIT)"
: > requests.log
set_mode referrers-flood:200
within 10 "$PREWARM_RUNTIME" install --referrer-of "$R/bundles/app@sha256:$img_a" --trust "$trust" --root prev \
  "${net[@]}" --registry-timeout 5s
expect_rc 1; assert_stderr_contains E_REFERRERS_LIMIT; unchanged
tried=$(grep -c '/manifests/sha256:' requests.log || true)
echo "figure: $tried manifests fetched for 200 listed referrers"
[ "$tried" -le 16 ] || fail "$tried referrer manifests fetched (at most 16)"
set_mode referrers-flood:3000
within 10 "$PREWARM_RUNTIME" install --referrer-of "$R/bundles/app@sha256:$img_a" --trust "$trust" --root prev \
  "${net[@]}" --registry-timeout 5s
expect_rc 3; assert_stderr_contains E_LIMIT; unchanged

step "the download directory: symlinks, a hard link, a FIFO, a directory planted there; nothing outside changes"
set_mode ok
hex=${d2#sha256:}
echo "outside file" > victim; chmod 0644 victim
mkdir -p outside-dir; chmod 0755 outside-dir
plant() { # ROOT KIND: a fresh copy of the previous root with KIND planted
  rm -rf "$1"; cp -a prev "$1"
  local dir=$1/.prewarm/downloads/$hex
  mkdir -p "$dir/slices"
  rm -rf "$dir/slices/cpu.tar.zst.partial" "$dir/slices/cpu.tar.zst" # the trickled case's partial, kept for resuming
  case $2 in
    symlink) ln -s "$SCRATCH/victim" "$dir/slices/cpu.tar.zst.partial" ;;
    hardlink) ln "$SCRATCH/victim" "$dir/slices/cpu.tar.zst.partial" ;;
    fifo) mkfifo "$dir/slices/cpu.tar.zst.partial" ;;
    directory) mkdir -p "$dir/slices/cpu.tar.zst.partial/x" ;;
    final-symlink) ln -s "$SCRATCH/victim" "$dir/slices/cpu.tar.zst" ;;
    dir-symlink) rm -rf "$dir"; ln -s "$SCRATCH/outside-dir" "$dir" ;;
    downloads-symlink) rm -rf "$1/.prewarm/downloads"; ln -s "$SCRATCH/outside-dir" "$1/.prewarm/downloads" ;;
  esac
}
victim_before=$(sha256sum victim; stat -c '%a %h' victim outside-dir; ls -A outside-dir)
for kind in symlink hardlink fifo directory final-symlink dir-symlink downloads-symlink; do
  plant "planted-$kind" "$kind"
  within 10 "$PREWARM_RUNTIME" install "$ref2" --trust "$trust" --root "planted-$kind" "${net[@]}" --registry-timeout 5s
  expect_rc 0
  case $kind in final-symlink) ;; *) assert_stderr_contains "removed" ;; esac
  "$PREWARM_RUNTIME" status --root "planted-$kind" | grep -q "serial 2 " || fail "$kind: bundle 2 is not installed"
  [ "$(sha256sum victim; stat -c '%a %h' victim outside-dir; ls -A outside-dir)" = "$victim_before" ] ||
    fail "$kind: a file or directory outside the root changed"
done

if command -v docker-registry > /dev/null; then
  step "a real docker-registry on localhost over plain http (registry:2's default): push and install"
  port=$(free_port)
  cat > plain.yml <<YAML
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $SCRATCH/plain-storage}}
http: {addr: 127.0.0.1:$port}
YAML
  docker-registry serve plain.yml > plain.log 2>&1 &
  REGISTRY_PIDS="$REGISTRY_PIDS $!"
  for _ in $(seq 1 100); do curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$port/v2/" && break; sleep 0.1; done
  pushed=$(bounded "$PREWARM" push bundle2 "localhost:$port/bundles/app:v2" --plain-http)
  echo "pushed $pushed"
  expect_exit 0 bounded "$PREWARM_RUNTIME" install "$pushed" --trust "$trust" --root plainroot --plain-http
  "$PREWARM_RUNTIME" status --root plainroot | grep -q "serial 2 " || fail "bundle 2 is not installed from localhost"
  expect_exit 1 bounded "$PREWARM_RUNTIME" install "$pushed" --trust "$trust" --root plainroot2 --retries 1
else
  echo "docker-registry not installed: the localhost plain-http case is skipped"
fi

echo "figure: the hostile registry cases took $(( $(date +%s) - t0 )) s"
pass
