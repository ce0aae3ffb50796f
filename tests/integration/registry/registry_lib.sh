# SPDX-License-Identifier: Apache-2.0
# Helpers for tests and benches that need a real OCI registry (Debian's
# docker-registry, distribution 2.8) on 127.0.0.1 with TLS and basic auth.
# Source it after lib.sh; it defines:
#   free_port                       a free TCP port on 127.0.0.1
#   make_tls_and_auth DIR USER PASS  DIR/cert.pem, DIR/key.pem (self-signed for
#                                   127.0.0.1), DIR/htpasswd (bcrypt)
#   start_registry NAME DIR [AUTH]  starts registry NAME with storage DIR/NAME-storage;
#                                   sets REG_PORT_<NAME>, REG_PID_<NAME>; access log
#                                   in DIR/NAME.log; killed when the test exits.
#                                   AUTH: the config's auth line (default: htpasswd)
#   stop_registry NAME
#   write_docker_config DIR USER PASS HOST...   DIR/config.json with auths
#   blob_path DIR NAME DIGEST       where the registry keeps a blob on disk
#   blob_get_bytes LOG FROM_LINE DIGEST   bytes the registry sent for GETs of DIGEST
#   wait_for_file FILE              until FILE is non-empty, at most 10 s
REGISTRY_PIDS=""

wait_for_file() {
  local i
  for i in $(seq 1 200); do
    [ -s "$1" ] && return 0
    sleep 0.05
  done
  fail "$1 did not appear within 10 s"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

make_tls_and_auth() {
  local dir=$1 user=$2 pass=$3
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$dir/key.pem" -out "$dir/cert.pem" -subj /CN=prewarm-test-registry \
    -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
  htpasswd -Bbn "$user" "$pass" > "$dir/htpasswd"
}

start_registry() {
  local name=$1 dir=$2 port
  local auth=${3:-"auth: {htpasswd: {realm: prewarm-test, path: $dir/htpasswd}}"}
  port=$(free_port)
  cat > "$dir/$name.yml" <<YAML
version: 0.1
log: {level: warn, accesslog: {disabled: false}}
storage: {filesystem: {rootdirectory: $dir/$name-storage}, delete: {enabled: true}}
http: {addr: 127.0.0.1:$port, tls: {certificate: $dir/cert.pem, key: $dir/key.pem}}
$auth
YAML
  docker-registry serve "$dir/$name.yml" >> "$dir/$name.log" 2>&1 &
  local pid=$!
  REGISTRY_PIDS="$REGISTRY_PIDS $pid"
  eval "REG_PORT_$name=$port REG_PID_$name=$pid"
  local i
  for i in $(seq 1 100); do
    if curl -s --max-time 2 -o /dev/null --cacert "$dir/cert.pem" "https://127.0.0.1:$port/v2/"; then return 0; fi
    sleep 0.1
  done
  cat "$dir/$name.log" >&2
  fail "registry $name did not start on port $port"
}

stop_registry() {
  local pid
  eval "pid=\$REG_PID_$1"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

stop_all_registries() {
  local pid
  for pid in $REGISTRY_PIDS; do kill "$pid" 2>/dev/null || true; done
}

write_docker_config() {
  local dir=$1 user=$2 pass=$3; shift 3
  local auth entries="" host
  auth=$(printf '%s:%s' "$user" "$pass" | base64 -w0)
  for host in "$@"; do entries="$entries${entries:+,}\"$host\": {\"auth\": \"$auth\"}"; done
  mkdir -p "$dir"
  printf '{"auths": {%s}}\n' "$entries" > "$dir/config.json"
}

blob_path() {
  local hex=${3#sha256:}
  echo "$1/$2-storage/docker/registry/v2/blobs/sha256/${hex:0:2}/$hex/data"
}

# (awk only: a grep that matches nothing would end a pipefail script)
blob_get_bytes() {
  local log=$1 from=$2 digest=$3
  tail -n "+$from" "$log" | awk -v path="/blobs/${digest:+$digest }" '$0 ~ /"GET / && index($0, path) {
    for (i = 1; i < NF; i++) if ($i ~ /HTTP\/[0-9.]+"$/) s += $(i + 2) } END { print s + 0 }'
}
