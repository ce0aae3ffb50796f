#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bundles through a real OCI registry (Debian's docker-registry on 127.0.0.1,
# TLS with a self-signed certificate, basic auth from htpasswd, credentials
# from a Docker config file): push, install by digest and by referrer, a
# node that fetches only its slice of a 3-target bundle (bytes from the
# registry's access log), tampered blob / signed manifest / OCI manifest
# refused with the cache untouched, a registry that is down, hangs, or goes
# away mid-download (old cache intact, a re-run resumes and completes), a
# persistent root that fetches no slice when it already holds the bundle,
# skopeo copies (registry to registry, OCI archive to registry, an image's
# referrers tag), and bearer tokens from a token server (token_server.py).
# Every command runs under `timeout`: nothing here can hold CI.
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${MAKE_TEST_BUNDLE:?}"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib.sh"
source "$here/registry_lib.sh"

for tool in docker-registry skopeo htpasswd openssl curl; do
  command -v "$tool" > /dev/null || skip "$tool not installed (setup.sh installs it)"
done
make_scratch registry
proxy_pids=""
trap 'stop_all_registries; kill $proxy_pids 2>/dev/null || true; rm -rf "$SCRATCH"' EXIT
cd "$SCRATCH"
t0=$(date +%s)
# Every command is bounded: a hang fails the step instead of holding CI.
bounded() { timeout --kill-after=5 90 "$@"; }

step "keys, three slice trees (cpu, nvidia, amd), bundles serial 1 and 2"
"$PREWARM" keygen --out keys/test_only_registry > /dev/null
for t in cpu nvidia amd; do
  mkdir -p "tree-$t/pocl"
  head -c $((1536 * 1024)) /dev/urandom > "tree-$t/pocl/$t.bin"
done
"$MAKE_TEST_BUNDLE" keys/test_only_registry.key bundle1 1 cpu:cpu:tree-cpu nv:nvidia:tree-nvidia amd:amd:tree-amd
"$MAKE_TEST_BUNDLE" keys/test_only_registry.key bundle2 2 cpu:cpu:tree-cpu nv:nvidia:tree-nvidia amd:amd:tree-amd
trust=keys/test_only_registry.pub
slice_digest() { echo "sha256:$(sha256sum "$1/slices/$2.tar.zst" | cut -d' ' -f1)"; }
slice_size() { stat -c %s "$1/slices/$2.tar.zst"; }
echo '[{"description": "test_only cpu host", "vendor": "cpu"}]' > host.json
export PREWARM_HOST_DEVICES=$PWD/host.json

step "two registries with TLS and basic auth; credentials in a Docker config"
make_tls_and_auth "$SCRATCH" tester test_only_secret
start_registry a "$SCRATCH"
start_registry b "$SCRATCH"
A=127.0.0.1:$REG_PORT_a
B=127.0.0.1:$REG_PORT_b
write_docker_config "$SCRATCH/docker" tester test_only_secret "$A" "https://$B"
export DOCKER_CONFIG=$SCRATCH/docker
tls=(--ca-file "$SCRATCH/cert.pem")

step "push: the artifact, its digest printed"
ref1=$(bounded "$PREWARM" push bundle1 "$A/bundles/app:v1" "${tls[@]}")
echo "pushed $ref1"
[[ $ref1 =~ ^$A/bundles/app@sha256:[0-9a-f]{64}$ ]] || fail "push printed '$ref1'"
again=$(bounded "$PREWARM" push bundle1 "$A/bundles/app:v1" "${tls[@]}" 2> push2.err)
[ "$again" = "$ref1" ] || fail "a second push of the same bundle gave another digest: $again"
grep -q "0 blobs uploaded, 6 already present" push2.err || { cat push2.err; fail "second push re-uploaded blobs"; }

step "install by digest: only this host's slice is fetched"
from=$(( $(wc -l < a.log) + 1 ))
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root root "${tls[@]}"
[ -f root/pocl/cpu.bin ] || fail "the cpu slice is not installed"
cmp -s root/pocl/cpu.bin tree-cpu/pocl/cpu.bin || fail "installed content differs"
cpu_bytes=$(blob_get_bytes a.log "$from" "$(slice_digest bundle1 cpu)")
nv_bytes=$(blob_get_bytes a.log "$from" "$(slice_digest bundle1 nv)")
amd_bytes=$(blob_get_bytes a.log "$from" "$(slice_digest bundle1 amd)")
all_blob_bytes=$(blob_get_bytes a.log "$from" "")
bundle_bytes=$(du -cb bundle1/manifest bundle1/manifest.sig bundle1/slices/* | tail -1 | cut -f1)
echo "figure: blob bytes sent by the registry: $all_blob_bytes of a $bundle_bytes-byte bundle" \
     "(cpu slice $cpu_bytes, nvidia $nv_bytes, amd $amd_bytes)"
[ "$cpu_bytes" -eq "$(slice_size bundle1 cpu)" ] || fail "cpu slice: $cpu_bytes bytes sent"
[ "$nv_bytes" -eq 0 ] && [ "$amd_bytes" -eq 0 ] || fail "slices for other hosts were fetched"
small=$(( $(stat -c %s bundle1/manifest) + $(stat -c %s bundle1/manifest.sig) ))
[ "$all_blob_bytes" -eq $(( cpu_bytes + small )) ] || fail "blob bytes $all_blob_bytes != cpu slice + manifest + signature"
[ ! -e root/.prewarm/downloads/"${ref1##*sha256:}" ] || fail "the download directory was left behind"

step "already installed: a persistent root fetches no slice and probes nothing at the next start"
from=$(( $(wc -l < a.log) + 1 ))
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root root "${tls[@]}" > again.out
grep -q "^already installed" again.out || { cat again.out; fail "the second install did not report already installed"; }
assert_stderr_contains "no slice fetched"
# The marker names this host's fingerprint: the host is not probed either
# (the test double announces every probe: "the host was not probed").
assert_stderr_contains "devices not probed"
if grep -qF "test host description" <<< "$LAST_STDERR"; then fail "an already-installed bundle probed the host"; fi
again_bytes=$(blob_get_bytes a.log "$from" "")
echo "figure: blob bytes sent for an already-installed bundle: $again_bytes (signed manifest + signature: $small)"
[ "$again_bytes" -le "$small" ] || fail "an already-installed bundle fetched $again_bytes blob bytes (> $small)"
[ ! -e root/.prewarm/downloads/"${ref1##*sha256:}" ] || fail "the download directory was left behind"

step "TLS: a self-signed registry without --ca-file is refused; --insecure-loopback-tls only for loopback"
expect_exit 1 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root tls-root --retries 1
assert_stderr_contains "certificate"
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root tls-root --insecure-loopback-tls
expect_exit 2 bounded "$PREWARM_RUNTIME" install "example.com/x/y@${ref1##*@}" --trust "$trust" --root tls-root --insecure-loopback-tls
assert_stderr_contains "not a loopback address"

step "credentials: none, or wrong ones, are refused"
mkdir -p nocreds && echo '{}' > nocreds/config.json
DOCKER_CONFIG=$PWD/nocreds expect_exit 1 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root c-root "${tls[@]}"
assert_stderr_contains "E_AUTH"
write_docker_config "$SCRATCH/badcreds" tester wrong "$A"
DOCKER_CONFIG=$SCRATCH/badcreds expect_exit 1 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root c-root "${tls[@]}"
assert_stderr_contains "HTTP 401"
[ ! -e c-root/pocl ] || fail "a refused install wrote caches"

# The refusal cases install over "prev": the installed cache without its
# marker (an earlier bundle's caches), so a refused install would have work to do.
cp -a root prev
rm -f prev/.prewarm/installed
cache_hash() { (cd "$1" && find . -path ./.prewarm/downloads -prune -o -print0 | LC_ALL=C sort -z |
  xargs -0 sh -c 'for f; do if [ -f "$f" ]; then sha256sum "$f"; else echo "$f"; fi; done' sh | sha256sum); }
before=$(cache_hash prev)

step "tampered slice blob in the registry's storage: refused (exit 3), cache untouched"
data=$(blob_path "$SCRATCH" a "$(slice_digest bundle1 cpu)")
cp "$data" blob.orig
flip_byte "$data" 4096
expect_exit 3 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root prev "${tls[@]}"
assert_stderr_contains E_BLOB_DIGEST
[ "$(cache_hash prev)" = "$before" ] || fail "a refused install changed the cache"
[ ! -e prev/.prewarm/downloads/"${ref1##*sha256:}" ] || fail "the refused download was kept"
assert_no_staging prev
cp blob.orig "$data"

step "tampered signed manifest blob: refused (exit 3), cache untouched"
data=$(blob_path "$SCRATCH" a "sha256:$(sha256sum bundle1/manifest | cut -d' ' -f1)")
cp "$data" manifest.orig
sed -i 's/^serial 1$/serial 7/' "$data"      # same size, other bytes
expect_exit 3 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root prev "${tls[@]}"
assert_stderr_contains E_BLOB_DIGEST
sed -i 's/^serial 7$/serial 999/' "$data"    # larger than its descriptor says
expect_exit 3 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root prev "${tls[@]}"
assert_stderr_contains E_LIMIT
cp manifest.orig "$data"
[ "$(cache_hash prev)" = "$before" ] || fail "a refused install changed the cache"

step "a re-signed-looking bundle pushed under a new digest: the signature refuses it (exit 3)"
cp -a bundle1 forged
sed -i 's/^serial .*/serial 999/' forged/manifest
forged_ref=$(bounded "$PREWARM" push forged "$A/bundles/app:forged" "${tls[@]}")
expect_exit 3 bounded "$PREWARM_RUNTIME" install "$forged_ref" --trust "$trust" --root prev "${tls[@]}"
assert_stderr_contains E_SIG
[ "$(cache_hash prev)" = "$before" ] || fail "a refused install changed the cache"

step "tampered OCI manifest in storage: the digest pin refuses it (exit 3)"
data=$(blob_path "$SCRATCH" a "${ref1##*@}")
cp "$data" oci.orig
flip_byte "$data" 20
expect_exit 3 bounded "$PREWARM_RUNTIME" install "$ref1" --trust "$trust" --root prev "${tls[@]}"
assert_stderr_contains E_OCI_DIGEST
cp oci.orig "$data"
[ "$(cache_hash prev)" = "$before" ] || fail "a refused install changed the cache"

step "an unpinned reference is a usage error"
expect_exit 2 bounded "$PREWARM_RUNTIME" install "oci://$A/bundles/app:v1" --trust "$trust" --root prev "${tls[@]}"
assert_stderr_contains E_UNPINNED

step "registry hangs: bounded by --registry-timeout, --on-failure warn starts the app"
python3 "$here/tcp_proxy.py" stall.port "$REG_PORT_a" stall & stall_pid=$!
proxy_pids="$proxy_pids $stall_pid"
wait_for_file stall.port
stall_ref="127.0.0.1:$(cat stall.port)/bundles/app@${ref1##*@}"
s0=$(date +%s)
expect_exit 1 bounded "$PREWARM_RUNTIME" install "$stall_ref" --trust "$trust" --root prev --insecure-loopback-tls \
  --registry-timeout 2s --retries 2
assert_stderr_contains "E_REGISTRY_DEADLINE"
[ $(( $(date +%s) - s0 )) -lt 15 ] || fail "a hanging registry held the install for more than 15 s"
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$stall_ref" --trust "$trust" --root prev --insecure-loopback-tls \
  --registry-timeout 1s --retries 1 --on-failure warn
assert_stderr_contains "not installed"
kill "$stall_pid" 2>/dev/null || true; wait "$stall_pid" 2>/dev/null || true
[ "$(cache_hash prev)" = "$before" ] || fail "a failed install changed the cache"

step "registry gone mid-download: old cache intact, the partial blob kept; a re-run resumes (Range) and completes"
cut_at=$(( $(slice_size bundle2 cpu) / 2 + 60000 ))   # past the small blobs, into the slice
python3 "$here/tcp_proxy.py" cut.port "$REG_PORT_a" "cut:$cut_at" & cut_pid=$!
python3 "$here/tcp_proxy.py" resume.port "$REG_PORT_a" pass & resume_pid=$!
proxy_pids="$proxy_pids $cut_pid $resume_pid"
wait_for_file cut.port
wait_for_file resume.port
# Credentials are per host:port: the proxies' addresses get them too.
write_docker_config "$SCRATCH/docker" tester test_only_secret "$A" "https://$B" "127.0.0.1:$(cat cut.port)" \
  "127.0.0.1:$(cat resume.port)"
ref2=$(bounded "$PREWARM" push bundle2 "$A/bundles/app:v2" "${tls[@]}")
cut_ref="127.0.0.1:$(cat cut.port)/bundles/app@${ref2##*@}"
expect_exit 1 bounded "$PREWARM_RUNTIME" install "$cut_ref" --trust "$trust" --root prev --insecure-loopback-tls --retries 2
assert_stderr_contains "E_REGISTRY_UNAVAILABLE"
# The proxy stops by itself at the cut; a TERM ends it too (it never waits
# forever when the install gave up before the cut).
kill "$cut_pid" 2>/dev/null || true
wait "$cut_pid" 2>/dev/null || true
echo "figure: the proxy cut after $(cat cut.port.bytes 2>/dev/null || echo '?') bytes of $cut_at"
[ "$(cache_hash prev)" = "$before" ] || fail "an interrupted download changed the cache"
partial=$(find prev/.prewarm/downloads -name '*.partial' | head -n1)
[ -n "$partial" ] && [ -s "$partial" ] || fail "no partial download kept for resuming"
kept=$(stat -c %s "$partial")
echo "figure: $kept bytes of the cpu slice kept after the cut"
from=$(( $(wc -l < a.log) + 1 ))
expect_exit 0 bounded "$PREWARM_RUNTIME" install "127.0.0.1:$(cat resume.port)/bundles/app@${ref2##*@}" --trust "$trust" \
  --root prev --insecure-loopback-tls
resumed=$(blob_get_bytes a.log "$from" "$(slice_digest bundle2 cpu)")
echo "figure: the re-run fetched $resumed bytes of the $(slice_size bundle2 cpu)-byte slice"
tail -n "+$from" a.log | grep -F "/blobs/$(slice_digest bundle2 cpu) " | grep -qF '" 206 ' ||
  fail "the re-run did not resume with a Range request"
[ "$resumed" -eq $(( $(slice_size bundle2 cpu) - kept )) ] || fail "resumed $resumed bytes, expected the rest"
"$PREWARM_RUNTIME" status --root prev | grep -q "serial 2 " || fail "bundle 2 is not what is installed"
kill "$resume_pid" 2>/dev/null || true

step "registry down: exit 1 after bounded retries; --on-failure warn exits 0"
stop_registry b
B_down=127.0.0.1:$REG_PORT_b
s0=$(date +%s)
expect_exit 1 bounded "$PREWARM_RUNTIME" install "$B_down/bundles/app@${ref1##*@}" --trust "$trust" --root down "${tls[@]}" --retries 3
assert_stderr_contains "E_REGISTRY_UNAVAILABLE"
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$B_down/bundles/app@${ref1##*@}" --trust "$trust" --root down "${tls[@]}" \
  --retries 1 --on-failure warn
assert_stderr_contains "not installed"
[ $(( $(date +%s) - s0 )) -lt 30 ] || fail "a downed registry held the installs for more than 30 s"
[ ! -e down/pocl ] || fail "a failed install wrote caches"
start_registry b "$SCRATCH"
B=127.0.0.1:$REG_PORT_b
write_docker_config "$SCRATCH/docker" tester test_only_secret "$A" "https://$B"

step "referrers: the bundle attached to an application image (tag-schema fallback on distribution 2.8)"
mkdir -p img && printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}' > img/config.json
img_cfg=sha256:$(sha256sum img/config.json | cut -d' ' -f1)
upload() {  # test fixture: a plain image for --subject, pushed with curl
  local loc
  loc=$(curl -sf --max-time 20 --cacert cert.pem -u tester:test_only_secret -X POST -D - -o /dev/null \
        "https://$A/v2/bundles/app/blobs/uploads/" | tr -d '\r' | awk 'tolower($1) == "location:" { print $2 }')
  case $loc in http*) ;; *) loc="https://$A$loc" ;; esac
  curl -sf --max-time 20 --cacert cert.pem -u tester:test_only_secret -X PUT --data-binary "@$1" \
    -H 'Content-Type: application/octet-stream' "$loc&digest=$2" > /dev/null
}
upload img/config.json "$img_cfg"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[]}' \
  "$img_cfg" "$(stat -c %s img/config.json)" > img/manifest.json
curl -sf --max-time 20 --cacert cert.pem -u tester:test_only_secret -X PUT --data-binary @img/manifest.json \
  -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' "https://$A/v2/bundles/app/manifests/app-v1" > /dev/null
image="$A/bundles/app@sha256:$(sha256sum img/manifest.json | cut -d' ' -f1)"
expect_exit 1 bounded "$PREWARM_RUNTIME" install --referrer-of "$image" --trust "$trust" --root r-root "${tls[@]}"
assert_stderr_contains "no prewarm bundle refers"
bounded "$PREWARM" push bundle1 "$A/bundles/app:r1" --subject "$image" "${tls[@]}" > /dev/null 2> push-s1.err
bounded "$PREWARM" push bundle2 "$A/bundles/app:r2" --subject "$image" "${tls[@]}" > /dev/null 2> push-s2.err
grep -q "referrers tag updated" push-s2.err || { cat push-s2.err; fail "the referrers tag was not updated"; }
expect_exit 0 bounded "$PREWARM_RUNTIME" install --referrer-of "$image" --trust "$trust" --root r-root "${tls[@]}" --json
assert_stderr_contains "serial 2"
cmp -s r-root/pocl/cpu.bin tree-cpu/pocl/cpu.bin || fail "referrer install content differs"
"$PREWARM" keygen --out keys/test_only_other > /dev/null
expect_exit 3 bounded "$PREWARM_RUNTIME" install --referrer-of "$image" --trust keys/test_only_other.pub --root r-other "${tls[@]}"
assert_stderr_contains E_REFERRER
[ ! -e r-other/pocl ] || fail "a referrer signed by an untrusted key was installed"

step "skopeo: registry-to-registry copy, then install from the copy"
mkdir -p certs.d && cp cert.pem certs.d/ca.crt
bounded skopeo copy --preserve-digests --authfile "$DOCKER_CONFIG/config.json" --src-cert-dir certs.d --dest-cert-dir certs.d \
  "docker://${ref1}" "docker://$B/mirror/app:v1" > skopeo1.log 2>&1 || { cat skopeo1.log; fail "skopeo copy failed"; }
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$B/mirror/app@${ref1##*@}" --trust "$trust" --root s-root "${tls[@]}"
cmp -s s-root/pocl/cpu.bin tree-cpu/pocl/cpu.bin || fail "install from the skopeo copy differs"

step "skopeo does not copy referrers: the image's copy has none until the referrers tag is copied too"
img_hex=${image##*sha256:}
bounded skopeo copy --preserve-digests --authfile "$DOCKER_CONFIG/config.json" --src-cert-dir certs.d --dest-cert-dir certs.d \
  "docker://$image" "docker://$B/mirror/app:app-v1" > skopeo4.log 2>&1 || { cat skopeo4.log; fail "skopeo copy of the image failed"; }
mirror_image="$B/mirror/app@sha256:$img_hex"
expect_exit 1 bounded "$PREWARM_RUNTIME" install --referrer-of "$mirror_image" --trust "$trust" --root m-root "${tls[@]}"
assert_stderr_contains "no prewarm bundle refers"
# skopeo copies the tag-schema index as a manifest list: with --preserve-digests
# it refuses ("must be converted ... cannot modify it"); without, it keeps every
# entry's digest but drops their artifactType (containers/image predates image-spec
# 1.1), so the runtime reads each entry's own manifest to find the bundle.
expect_exit 1 bounded skopeo copy --all --preserve-digests --authfile "$DOCKER_CONFIG/config.json" \
  --src-cert-dir certs.d --dest-cert-dir certs.d "docker://$A/bundles/app:sha256-$img_hex" \
  "docker://$B/mirror/app:sha256-$img_hex"
echo "skopeo $(skopeo --version | awk '{print $3}') with --preserve-digests: ${LAST_STDERR##*msg=}"
bounded skopeo copy --all --authfile "$DOCKER_CONFIG/config.json" --src-cert-dir certs.d \
  --dest-cert-dir certs.d "docker://$A/bundles/app:sha256-$img_hex" "docker://$B/mirror/app:sha256-$img_hex" \
  > skopeo5.log 2>&1 || { cat skopeo5.log; fail "skopeo copy of the referrers tag failed"; }
expect_exit 0 bounded "$PREWARM_RUNTIME" install --referrer-of "$mirror_image" --trust "$trust" --root m-root "${tls[@]}"
assert_stderr_contains "serial 2"
cmp -s m-root/pocl/cpu.bin tree-cpu/pocl/cpu.bin || fail "install by referrer from the mirror differs"

step "air-gapped: prewarm push to oci-archive, skopeo copy into a registry, install by the same digest"
archive_digest=$(bounded "$PREWARM" push bundle1 oci-archive:bundle1.tar:v1)
[ "$archive_digest" = "${ref1##*@}" ] || fail "the OCI archive's digest $archive_digest differs from the registry's"
bounded skopeo copy --preserve-digests --authfile "$DOCKER_CONFIG/config.json" --dest-cert-dir certs.d \
  oci-archive:bundle1.tar:v1 "docker://$B/airgap/app:v1" > skopeo2.log 2>&1 || { cat skopeo2.log; fail "skopeo copy of the archive failed"; }
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$B/airgap/app@$archive_digest" --trust "$trust" --root g-root "${tls[@]}"
cmp -s g-root/pocl/cpu.bin tree-cpu/pocl/cpu.bin || fail "install from the air-gapped copy differs"
bounded skopeo copy --authfile "$DOCKER_CONFIG/config.json" --src-cert-dir certs.d "docker://${ref1}" oci:layout-copy:v1 > skopeo3.log 2>&1 ||
  { cat skopeo3.log; fail "skopeo copy to an OCI layout failed"; }
[ -f "layout-copy/blobs/sha256/${ref1##*sha256:}" ] || fail "skopeo's OCI layout lacks the artifact manifest"

step "bearer tokens: distribution's token auth with a token server (RS256 JWT, its certificate in the rootcertbundle)"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout token-key.pem -out token-cert.pem \
  -subj /CN=prewarm-test-token-issuer 2>/dev/null
python3 "$here/token_server.py" token.port cert.pem key.pem token-cert.pem token-key.pem prewarm-test-issuer \
  tester:test_only_secret & token_pid=$!
proxy_pids="$proxy_pids $token_pid"
wait_for_file token.port
realm="https://127.0.0.1:$(cat token.port)/token"
start_registry t "$SCRATCH" "auth: {token: {realm: \"$realm\", service: prewarm-test-registry, issuer: prewarm-test-issuer, rootcertbundle: $SCRATCH/token-cert.pem}}"
T=127.0.0.1:$REG_PORT_t
write_docker_config "$SCRATCH/docker" tester test_only_secret "$A" "https://$B" "$T"
tref=$(bounded "$PREWARM" push bundle1 "$T/bundles/app:v1" "${tls[@]}")
[ "${tref##*@}" = "${ref1##*@}" ] || fail "push through bearer tokens gave another digest: $tref"
# The registry names the actions in either order (distribution's challenge
# does not sort them), so a push token is any scope that holds both.
grep -Eq "^token repository:bundles/app:(pull,push|push,pull)$" token.port.log || { cat token.port.log; fail "no push token was issued"; }
expect_exit 0 bounded "$PREWARM_RUNTIME" install "$tref" --trust "$trust" --root t-root "${tls[@]}"
cmp -s t-root/pocl/cpu.bin tree-cpu/pocl/cpu.bin || fail "install through bearer tokens differs"
grep -q "^token repository:bundles/app:pull$" token.port.log || { cat token.port.log; fail "no pull token was issued"; }
echo "figure: $(wc -l < token.port.log) tokens issued for a push and an install"
write_docker_config "$SCRATCH/badtoken" tester wrong "$T"
DOCKER_CONFIG=$SCRATCH/badtoken expect_exit 1 bounded "$PREWARM_RUNTIME" install "$tref" --trust "$trust" --root t-bad "${tls[@]}"
assert_stderr_contains "E_AUTH"
[ ! -e t-bad/pocl ] || fail "a refused install wrote caches"

echo "figure: registry test took $(( $(date +%s) - t0 )) s"
pass
