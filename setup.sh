#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One entry point for a fresh Debian 12 machine:
#   ./setup.sh          install dependencies, build what the main job needs (prewarm,
#                       prewarm-runtime and their libraries; no tests, no benchmarks), then run the
#                       main job: build a signed bundle from the embedded default manifest on the CPU
#                       OpenCL device, verify it and install it into out/root
#   ./setup.sh test     install dependencies, build everything (tests and benchmarks too), run the
#                       test suite (ctest): every
#                       test except the label "slow" (the container image that compiles prewarm
#                       itself with buildah), which `./setup.sh test-all` adds
#   ./setup.sh deps     only install the Debian packages
#   ./setup.sh build    only configure and build
# Environment: BUILD_DIR (default build), JOBS (default nproc), CI=true (warnings are errors),
# SETUP_DRY_RUN=1 (print the commands that install, configure, build and test instead of running them),
# PREWARM_PYTHON_ENV_ROOT (where `test` keeps the torch tests' virtual environments and wheels;
# default ~/.cache/prewarm/python), PREWARM_TORCH_TESTS=0 (no torch environment: those tests skip).
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

# Every Debian package the project needs: build, tests, integration (PoCL, ocloc, Level Zero loader,
# pyopencl, buildah), benchmarks (plots).
PACKAGES=(
  cmake ninja-build g++ pkg-config git ca-certificates
  libssl-dev libarchive-dev libzstd-dev zstd libyaml-cpp-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers clinfo pocl-opencl-icd
  intel-opencl-icd libze-dev libze1
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  clang libclang-rt-dev
  python3 python3-venv python3-pyopencl python3-numpy python3-matplotlib
  buildah debootstrap uidmap fuse-overlayfs
  strace clang-15 bc openssl help2man time
  hashcat clpeak libclblast-dev
  libcurl4-openssl-dev docker-registry skopeo apache2-utils curl
)

# Runs a command, or prints it under SETUP_DRY_RUN=1.
run() {
  if [ "${SETUP_DRY_RUN:-}" = 1 ]; then echo "+ $*"; else "$@"; fi
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then run "$@"; else run sudo "$@"; fi
}

install_deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#PACKAGES[@]} Debian packages present"
    return
  fi
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  local werror=OFF
  [ "${CI:-}" = "true" ] && werror=ON
  run cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DPREWARM_WERROR="$werror" "$@"
  run cmake --build "$BUILD_DIR" -j "$JOBS"
}

# The torch tests' Python (tests/python/requirements.txt: pinned torch, transformers and every
# dependency) in a virtual environment outside the clone, so that every build and CI run on this
# machine reuses it: keyed by the Python version and the requirements, a changed pin makes a new
# one. The wheels stay in PYTHON_ENV_ROOT/wheels, so a new environment downloads only what
# changed. A fresh machine pays ~2.8 GB of download and ~4.9 GB of disk, about 2 minutes (measured:
# tests/python/requirements.txt); a reused one nothing. Without PyPI the torch tests skip and say
# why; the rest of the suite runs. Sets TORCH_PYTHON (empty: none).
PYTHON_ENV_ROOT=${PREWARM_PYTHON_ENV_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/prewarm/python}
TORCH_PYTHON=""
python_test_env() {
  local requirements=tests/python/requirements.txt
  if [ "${PREWARM_TORCH_TESTS:-1}" = 0 ]; then
    echo "setup: PREWARM_TORCH_TESTS=0: no torch environment, the torch tests skip"
    return
  fi
  if [ "${SETUP_DRY_RUN:-}" = 1 ]; then
    echo "+ torch test environment: python3 -m venv $PYTHON_ENV_ROOT/venv-KEY; pip install -r $requirements"
    return
  fi
  local key venv
  key=$({ python3 -VV; cat "$requirements"; } | sha256sum | cut -c1-16)
  venv="$PYTHON_ENV_ROOT/venv-$key"
  if [ -f "$venv/.complete" ] && [ -x "$venv/bin/python" ]; then
    echo "setup: torch test environment $venv (reused)"
    TORCH_PYTHON="$venv/bin/python"
    return
  fi
  echo "setup: creating the torch test environment $venv (pinned: $requirements)"
  local started=$SECONDS
  if rm -rf "$venv" && mkdir -p "$PYTHON_ENV_ROOT/wheels" && python3 -m venv "$venv" &&
     "$venv/bin/python" -m pip download --no-input --quiet --no-deps --only-binary=:all: \
           -d "$PYTHON_ENV_ROOT/wheels" -r "$requirements" &&
     "$venv/bin/python" -m pip install --no-input --quiet --no-index --no-deps \
           --find-links "$PYTHON_ENV_ROOT/wheels" -r "$requirements" &&
     "$venv/bin/python" -c 'import torch, transformers'; then
    touch "$venv/.complete"
    TORCH_PYTHON="$venv/bin/python"
    echo "setup: torch test environment ready in $((SECONDS - started)) s"
  else
    echo "setup: warning: the torch test environment could not be made (PyPI unreachable?): the" \
         "torch tests skip" >&2
    rm -rf "$venv"
  fi
}

# What the main job runs: the two programs and their libraries (tests and benchmarks are about
# a third of a full build).
main_build_options=(-DPREWARM_BUILD_TESTS=OFF -DPREWARM_BUILD_BENCH=OFF)
test_build_options=(-DPREWARM_BUILD_TESTS=ON -DPREWARM_BUILD_BENCH=ON)

main_job() {
  local prewarm="$BUILD_DIR/prewarm/cli/prewarm"
  local runtime="$BUILD_DIR/runtime/cli/prewarm-runtime"
  if [ "${SETUP_DRY_RUN:-}" = 1 ]; then
    echo "+ main job: $prewarm keygen, targets, build, inspect; $runtime verify, install, status"
    return
  fi
  mkdir -p keys out
  # A development key: production keys live in the CI secret store, never in the tree.
  [ -f keys/dev.key ] || "$prewarm" keygen --out keys/dev
  "$prewarm" targets
  # The default serial is the build time, so a rebuild installs over the last one (the runtime
  # refuses an older serial, or the same serial with another manifest: rollback protection).
  "$prewarm" build --key keys/dev.key --out out/default.bundle
  "$prewarm" inspect out/default.bundle --trust keys/dev.pub
  "$runtime" verify out/default.bundle --trust keys/dev.pub
  "$runtime" install out/default.bundle --trust keys/dev.pub --root out/root
  "$runtime" status --root out/root
  echo "setup: done. Point an application at the caches with:"
  echo "  eval \"\$($runtime env --root out/root)\"   or   $runtime exec --root out/root -- APP"
}

case "${1:-all}" in
  deps) install_deps ;;
  build) install_deps; configure_and_build "${main_build_options[@]}" ;;
  test | test-all)
    install_deps
    python_test_env
    configure_and_build "${test_build_options[@]}" ${TORCH_PYTHON:+-DPREWARM_TORCH_PYTHON="$TORCH_PYTHON"}
    exclude=()
    [ "$1" = test ] && exclude=(-LE slow)
    run ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 900 "${exclude[@]}"
    ;;
  all) install_deps; configure_and_build "${main_build_options[@]}"; main_job ;;
  *) echo "usage: ./setup.sh [all|test|test-all|deps|build]" >&2; exit 2 ;;
esac
