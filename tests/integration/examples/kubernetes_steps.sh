#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# docker/kubernetes/prewarm-init.yaml without a cluster: the init container's
# script and then the application container's command, read from the YAML and
# run in sequence on this host with the Pod's paths mapped into a scratch
# directory, as the kubelet would run them (init first, to completion, then
# the app). The bundle is the worked example's (docker/examples/your-image),
# built here on PoCL; PREWARM_BUNDLE names its directory instead of a registry
# reference (the registry path is integration.registry's). The app's stand-in
# `python3 -m server` runs warm-demo and must find the installed PoCL cache
# through env.sh and compile nothing new. ~10-20 s.
# Usage: kubernetes_steps.sh (PREWARM, PREWARM_RUNTIME, PREWARM_SOURCE_DIR set)
set -euo pipefail
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}" "${PREWARM_SOURCE_DIR:?}"
say() { echo "kubernetes-steps: $*" >&2; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/prewarm-k8s.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
bin=$scratch/bin
mkdir -p "$bin" "$scratch/trust" "$scratch/docker" "$scratch/cache" "$scratch/app"
ln -s "$PREWARM" "$bin/prewarm"
ln -s "$PREWARM_RUNTIME" "$bin/prewarm-runtime"
# Debian's python3-pyopencl belongs to /usr/bin/python3, not to whichever
# python3 comes first on PATH: the Pod's `python3` is that one.
[ -x /usr/bin/python3 ] && ln -s /usr/bin/python3 "$bin/python3"
export PATH="$bin:$PATH"
python3 -c 'import pyopencl, yaml' 2>/dev/null || { say "SKIP: python3-pyopencl and python3-yaml are needed"; exit 77; }
example=$PREWARM_SOURCE_DIR/docker/examples/your-image
export PYTHONPATH="$example/app:$scratch/app"
printf '#!/bin/sh\nexec python3 -c "import sys, warm_demo; sys.exit(warm_demo.main())"\n' >"$bin/warm-demo"
chmod +x "$bin/warm-demo"

# The bundle: the example's manifest, built on this host's PoCL device.
prewarm keygen --out "$scratch/test_only_k8s" >/dev/null
prewarm build "$example/app/prewarm.yaml" --key "$scratch/test_only_k8s.key" --out "$scratch/bundle" \
  >"$scratch/build.log" 2>&1 || { cat "$scratch/build.log" >&2; say "FAIL: prewarm build"; exit 1; }
# The ConfigMap's policy.yaml (docs/reference/trust-policy.md).
cp "$scratch/test_only_k8s.pub" "$scratch/trust/release.pub"
printf 'version: 1\nkeys:\n  - file: release.pub\nchannels:\n  examples/warm-demo: {}\n' >"$scratch/trust/policy.yaml"
echo '{}' >"$scratch/docker/config.json"

# The Pod's two steps, read from the YAML with the mounts mapped.
python3 - "$PREWARM_SOURCE_DIR/docker/kubernetes/prewarm-init.yaml" "$scratch" <<'PY'
import sys, yaml
deployment = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "Deployment")
pod = deployment["spec"]["template"]["spec"]
scratch = sys.argv[2]
mounts = {"/var/cache/prewarm": f"{scratch}/cache", "/etc/prewarm/trust": f"{scratch}/trust",
          "/etc/prewarm/docker": f"{scratch}/docker"}
def mapped(text):
    for pod_path, here in mounts.items():
        text = text.replace(pod_path, here)
    return text
init, app = pod["initContainers"][0], pod["containers"][0]
def quoted(text):
    return "'" + text.replace("'", "'\\''") + "'"
for c in (init, app):
    for m in c.get("volumeMounts", []):
        if m["mountPath"] not in mounts:
            sys.exit(f"kubernetes-steps: mount {m['mountPath']} of {c['name']} is not mapped here")
with open(f"{scratch}/init.sh", "w") as f:
    for e in init.get("env", []):
        value = e["value"] if e["name"] != "PREWARM_BUNDLE" else f"{scratch}/bundle"
        f.write(f"export {e['name']}='{mapped(value)}'\n")
    f.write(mapped(" ".join(init["command"]) + " " + quoted(init["args"][0]) + "\n"))
with open(f"{scratch}/app.sh", "w") as f:
    f.write(mapped(" ".join(app["command"][:2]) + " " + quoted(app["command"][2]) + "\n"))
PY
# The application's stand-in for `python3 -m server`: warm-demo, plus what it was pointed at.
cat >"$scratch/app/server.py" <<'PY'
import os, sys, warm_demo
print("POCL_CACHE_DIR=" + os.environ.get("POCL_CACHE_DIR", ""), file=sys.stderr)
sys.exit(warm_demo.main())
PY

say "init container: $(tail -n 3 "$scratch/init.sh" | head -c 300)"
bash "$scratch/init.sh" 2>"$scratch/init.err" || { cat "$scratch/init.err" >&2; say "FAIL: the init step exited $?"; exit 1; }
grep -q "POCL_CACHE_DIR" "$scratch/cache/env.sh" || { cat "$scratch/init.err" "$scratch/cache/env.sh" >&2; say "FAIL: env.sh exports no PoCL cache"; exit 1; }
# PoCL leaves an empty tempfile_XXXXXX per program even on a hit (its
# temporary source name): a compile shows as a new program binary instead.
kernels() { find "$scratch/cache/.prewarm/versions" -type f ! -name 'tempfile_*' | sort; }
kernels >"$scratch/before.txt"
bash "$scratch/app.sh" >"$scratch/app.out" 2>"$scratch/app.err" || { cat "$scratch/app.err" >&2; say "FAIL: the app step"; exit 1; }
kernels >"$scratch/after.txt"
pocl_dir=$(sed -n 's/^POCL_CACHE_DIR=//p' "$scratch/app.err")
case $pocl_dir in
  "$scratch/cache/"*) ;;
  *) say "FAIL: the app's POCL_CACHE_DIR is '$pocl_dir', not under the installed root"; exit 1 ;;
esac
if ! cmp -s "$scratch/before.txt" "$scratch/after.txt"; then
  diff "$scratch/before.txt" "$scratch/after.txt" | sed "s|$scratch/||" >&2
  say "FAIL: the app compiled kernels anew (new files in the installed cache, above)"; exit 1
fi
say "PASS: init installed, env.sh written, the app used $pocl_dir and compiled nothing new: $(cat "$scratch/app.out")"
