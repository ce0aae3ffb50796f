#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The framework check where the application is, in seconds (no torch import):
# a command workload run by the venv's own interpreter (setup.sh's torch
# environment: TORCH_PYTHON) fills an Inductor-kind cache; its slice requires
# the venv's torch and triton versions and records the venv's site-packages.
#   1. `prewarm inspect` shows the recorded site-packages;
#   2. an init container's install (docker/kubernetes/prewarm-init.yaml): an
#      empty environment, no PREWARM_PYTHON, a PATH without any python: the
#      installer reads the versions from the venv's *.dist-info/METADATA (and
#      pyvenv.cfg) and selects the slice;
#   3. the same without the venv at the recorded path (a copy of the bundle's
#      site-packages line cannot be faked: the venv is hidden by a mount
#      namespace when unshare works, else this step is skipped): the slice is
#      skipped, and the warning names the recorded path and PREWARM_PYTHON.
# The versions the installer reads are compared with the interpreter's own
# (importlib.metadata in the venv): an independent source.
# Env: TORCH_PYTHON, PREWARM, PREWARM_RUNTIME. Cost: ~5 s (three Python
# starts without torch, one build, two installs).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
: "${PREWARM:?}" "${PREWARM_RUNTIME:?}"
PYTHON=${TORCH_PYTHON:-}
[ -n "$PYTHON" ] && [ -x "$PYTHON" ] || skip "no torch environment (./setup.sh test makes it: tests/python/requirements.txt)"
SITE_PACKAGES=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
TORCH_VERSION=$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null) \
  || skip "$PYTHON has no torch"
make_scratch framework-check
unset PREWARM_PYTHON

step "build: a workload run by the venv's interpreter"
"$PREWARM" keygen --out "$SCRATCH/test_only_fw" > /dev/null 2>&1 || fail "keygen failed"
cat > "$SCRATCH/manifest.yaml" <<YAML
version: 1
models:
  - name: venv-app
    command:
      argv: [$PYTHON, -c, "import os; open(os.path.join(os.environ['TORCHINDUCTOR_CACHE_DIR'], 'entry'), 'w').write('compiled')"]
      kinds: [inductor]
targets: [cpu]
YAML
"$PREWARM" build "$SCRATCH/manifest.yaml" --key "$SCRATCH/test_only_fw.key" --out "$SCRATCH/bundle" \
  > /dev/null 2> "$SCRATCH/build.err" || { cat "$SCRATCH/build.err" >&2; fail "prewarm build failed"; }
"$PREWARM" inspect "$SCRATCH/bundle" --trust "$SCRATCH/test_only_fw.pub" > "$SCRATCH/inspect.txt"
grep -qF "requires framework.torch == $TORCH_VERSION" "$SCRATCH/inspect.txt" || { cat "$SCRATCH/inspect.txt" >&2; fail "the slice does not require torch $TORCH_VERSION"; }
grep -qF "python   $SITE_PACKAGES " "$SCRATCH/inspect.txt" || { cat "$SCRATCH/inspect.txt" >&2; fail "the slice does not record $SITE_PACKAGES"; }

step "init container: no Python anywhere in PATH, no PREWARM_PYTHON"
mkdir -p "$SCRATCH/empty-bin"
env -i HOME="$SCRATCH" PATH="$SCRATCH/empty-bin" "$PREWARM_RUNTIME" -v install "$SCRATCH/bundle" \
  --trust "$SCRATCH/test_only_fw.pub" --root "$SCRATCH/root" > /dev/null 2> "$SCRATCH/install.err" \
  || { cat "$SCRATCH/install.err" >&2; fail "install failed"; }
[ -f "$SCRATCH/root/inductor/entry" ] || { cat "$SCRATCH/install.err" >&2; fail "the inductor slice was not installed"; }
grep -qF "framework versions from site-packages $SITE_PACKAGES" "$SCRATCH/install.err" \
  || { cat "$SCRATCH/install.err" >&2; fail "the versions did not come from the recorded site-packages"; }

step "the venv not at the recorded path: skipped, with the reason"
UNSHARE=$(command -v unshare || true)
MOUNT=$(command -v mount || true)
if [ -n "$UNSHARE" ] && [ -n "$MOUNT" ] && "$UNSHARE" -rm true 2> /dev/null; then
  env -i HOME="$SCRATCH" PATH="$SCRATCH/empty-bin" "$UNSHARE" -rm /bin/sh -c \
    '"$1" -t tmpfs none "$2" && exec "$3" install "$4/bundle" --trust "$4/test_only_fw.pub" --root "$4/root2"' \
    sh "$MOUNT" "$SITE_PACKAGES" "$PREWARM_RUNTIME" "$SCRATCH" > /dev/null 2> "$SCRATCH/hidden.err" && status=0 || status=$?
  [ "$status" -eq 4 ] || { cat "$SCRATCH/hidden.err" >&2; fail "expected exit 4 (nothing applies), got $status"; }
  grep -qF "$SITE_PACKAGES" "$SCRATCH/hidden.err" || { cat "$SCRATCH/hidden.err" >&2; fail "the warning does not name the recorded site-packages"; }
  grep -qF "PREWARM_PYTHON" "$SCRATCH/hidden.err" || { cat "$SCRATCH/hidden.err" >&2; fail "the warning does not name PREWARM_PYTHON"; }
else
  echo "(skipped: no unprivileged mount namespace here to hide the venv)"
fi
pass
