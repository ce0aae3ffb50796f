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
#   ./setup.sh intel-root
#                       make (once) the Debian sid root that carries the Intel compute runtime 26.27
#                       (ocloc, IGC, NEO, Level Zero) Debian 12 cannot run; `test` makes it when absent
#   ./setup.sh intel-sycl
#                       the root, plus Intel's SYCL runtime and dpctl from PyPI in ROOT/opt/prewarm-sycl
#                       and OpenVINO in ROOT/opt/prewarm-openvino (`test` makes the SYCL one and
#                       `test-all` both, unless PREWARM_INTEL_SYCL=0)
# Environment: BUILD_DIR (default build), JOBS (default nproc), CI=true (warnings are errors),
# PREWARM_INTEL_ROOT (default /var/cache/prewarm/intel-sid: outside the clone, so every clone and CI
# run on one machine shares it), PREWARM_INTEL_ROOT_SKIP=1 (`test` does not make it; its tests skip),
# SETUP_DRY_RUN=1 (print the commands that install, configure, build and test instead of running them),
# PREWARM_PYTHON_ENV_ROOT (where `test` keeps the torch tests' virtual environments and wheels;
# default ~/.cache/prewarm/python), PREWARM_TORCH_TESTS=0 (no torch environment: those tests skip).
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

# Every Debian package the project needs: build, tests, integration (PoCL, ocloc, Level Zero loader,
# pyopencl, buildah; libva2: a build host where NEO could list VA media sharing, which the virtual
# device's record must not depend on, and NEO's own lists with it to compare against), benchmarks
# (plots).
PACKAGES=(
  cmake ninja-build g++ pkg-config git ca-certificates
  libssl-dev libarchive-dev libzstd-dev zstd libyaml-cpp-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers clinfo pocl-opencl-icd libva2
  intel-opencl-icd libze-dev libze1
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  clang libclang-rt-dev
  python3 python3-venv python3-pyopencl python3-numpy python3-matplotlib python3-yaml
  buildah debootstrap uidmap fuse-overlayfs
  strace clang-15 bc openssl help2man time
  hashcat clpeak libclblast-dev clfft-client
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
  local werror=OFF launcher=()
  [ "${CI:-}" = "true" ] && werror=ON
  # ccache where the machine has it: a second clone (or CI run) on one machine
  # compiles only what changed. Paths under the clone are hashed relative to
  # it, so clones in other folders share the cache. ccache also hashes the
  # build directory of every -g compile by default, so no other clone would
  # ever hit: NOHASHDIR leaves it out (the price: a hit's debug info names the
  # directory of the clone that compiled it first).
  if command -v ccache >/dev/null 2>&1; then
    export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  run cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DPREWARM_WERROR="$werror" "${launcher[@]}" "$@"
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
  pinned_venv "torch test environment" "venv-" "$requirements" "torch, transformers" "torch tests"
  TORCH_PYTHON=$PINNED_PYTHON
}

# pinned_venv WHAT PREFIX REQUIREMENTS MODULES TESTS: the virtual environment
# PYTHON_ENV_ROOT/PREFIX<key> of the pinned REQUIREMENTS (keyed by the Python version and the
# requirements), reused where complete, else made from the shared wheel directory (downloading
# only what it lacks) and checked by importing MODULES. Sets PINNED_PYTHON (empty: it could not be
# made, and TESTS skip).
PINNED_PYTHON=""
pinned_venv() {
  local what=$1 prefix=$2 requirements=$3 modules=$4 tests=$5 key venv started=$SECONDS
  PINNED_PYTHON=""
  key=$({ python3 -VV; cat "$requirements"; } | sha256sum | cut -c1-16)
  venv="$PYTHON_ENV_ROOT/$prefix$key"
  if [ -f "$venv/.complete" ] && [ -x "$venv/bin/python" ]; then
    echo "setup: $what $venv (reused)"
    PINNED_PYTHON="$venv/bin/python"
    return
  fi
  echo "setup: creating the $what $venv (pinned: $requirements)"
  if rm -rf "$venv" && mkdir -p "$PYTHON_ENV_ROOT/wheels" && python3 -m venv "$venv" &&
     "$venv/bin/python" -m pip download --no-input --quiet --no-deps --only-binary=:all: \
           -d "$PYTHON_ENV_ROOT/wheels" -r "$requirements" &&
     "$venv/bin/python" -m pip install --no-input --quiet --no-index --no-deps \
           --find-links "$PYTHON_ENV_ROOT/wheels" -r "$requirements" &&
     "$venv/bin/python" -c "import $modules"; then
    touch "$venv/.complete"
    PINNED_PYTHON="$venv/bin/python"
    echo "setup: $what ready in $((SECONDS - started)) s"
  else
    echo "setup: warning: the $what could not be made (PyPI unreachable?): the $tests skip" >&2
    rm -rf "$venv"
  fi
}

# The CPU application tests' environment (tests/python/cpu-apps-requirements.txt: PyTensor, ~150 MB
# with numba and scipy), made as the torch one is, in PYTHON_ENV_ROOT/venv-cpu-apps-KEY from the same
# wheel directory. Without PyPI those tests skip and say why. Sets CPU_APPS_PYTHON (empty: none).
CPU_APPS_PYTHON=""
cpu_apps_test_env() {
  local requirements=tests/python/cpu-apps-requirements.txt
  if [ "${SETUP_DRY_RUN:-}" = 1 ]; then
    echo "+ CPU application test environment: python3 -m venv $PYTHON_ENV_ROOT/venv-cpu-apps-KEY; pip install -r $requirements"
    return
  fi
  pinned_venv "CPU application test environment" "venv-cpu-apps-" "$requirements" pytensor "PyTensor tests"
  CPU_APPS_PYTHON=$PINNED_PYTHON
}

# What the main job runs: the two programs and their libraries (tests and benchmarks are about
# a third of a full build).
main_build_options=(-DPREWARM_BUILD_TESTS=OFF -DPREWARM_BUILD_BENCH=OFF)
test_build_options=(-DPREWARM_BUILD_TESTS=ON -DPREWARM_BUILD_BENCH=ON)

# The Intel compute runtime that knows Battlemage, Meteor/Lunar/Panther Lake (26.27) is only in
# Debian sid/forky, and its IGC needs glibc 2.43, so it lives in a sid root of its own. Its binaries
# run on the host through the root's own dynamic loader (no chroot: host paths work), see docs/guide/targets.md
# "Intel toolchains". Made once (80 s and 634 MB measured on a 2-core build machine, 84 MB
# downloaded) and reused: `.complete`, written last, lists the
# packages and versions; a partial root is never used (it is built beside and renamed into place);
# a lock serialises concurrent runs (two clones testing at once wait for one build).
INTEL_ROOT=${PREWARM_INTEL_ROOT:-/var/cache/prewarm/intel-sid}
INTEL_ROOT_PACKAGES=(intel-ocloc libigc2 libigdfcl2 intel-opencl-icd ocl-icd-libopencl1 libze1
  libze-intel-gpu1 clinfo python3)
# Optional: installed when the suite carries them (an unmodified OpenCL application for warm-ups).
INTEL_ROOT_OPTIONAL=(clpeak)

debian_mirror() {
  # The mirror the host already uses (deb822 `URIs:` or one-line `deb URL suite`).
  local m
  m=$(sed -n -E 's@^URIs:[[:space:]]*(\S+/debian)/?[[:space:]]*$@\1@p; s@^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?(\S+/debian)/?[[:space:]].*@\2@p' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  echo "${m:-http://deb.debian.org/debian}"
}

intel_root_complete() {
  local stamp="$INTEL_ROOT/.complete" p
  [ -f "$stamp" ] || return 1
  for p in "${INTEL_ROOT_PACKAGES[@]}"; do grep -q "^$p " "$stamp" || return 1; done
  [ -x "$INTEL_ROOT/host-bin/ocloc" ]
}

# host-bin/ocloc: sid's ocloc run by sid's own dynamic loader, so Debian 12 runs it on host paths.
# It names the versioned binary: /usr/bin/ocloc is a link through /etc/alternatives, which is
# absolute and would resolve on the host. The root is found from the script's own place, so a
# moved or copied root keeps working. PREWARM_OCLOC=<root>/host-bin/ocloc hands it to prewarm.
write_ocloc_wrapper() {
  local root=$1 target
  target=$(readlink "$root/etc/alternatives/ocloc")
  [ -x "$root$target" ] || { echo "setup: error: E_INTEL_ROOT: $root has no ocloc ($target)" >&2; return 1; }
  mkdir -p "$root/host-bin"
  cat >"$root/host-bin/ocloc.tmp" <<WRAPPER
#!/bin/sh
R=\$(dirname "\$(dirname "\$(readlink -f "\$0")")")
exec "\$R/lib64/ld-linux-x86-64.so.2" --library-path "\$R/usr/lib/x86_64-linux-gnu:\$R/lib/x86_64-linux-gnu" "\$R$target" "\$@"
WRAPPER
  chmod 755 "$root/host-bin/ocloc.tmp"
  mv "$root/host-bin/ocloc.tmp" "$root/host-bin/ocloc"
}

make_intel_root() {
  if [ "${SETUP_DRY_RUN:-}" = 1 ]; then
    echo "+ debootstrap --variant=minbase sid $INTEL_ROOT $(debian_mirror); apt-get install ${INTEL_ROOT_PACKAGES[*]}"
    return
  fi
  if intel_root_complete; then
    echo "setup: Intel sid root present: $INTEL_ROOT"
    return
  fi
  if [ "$(id -u)" -ne 0 ]; then
    # debootstrap and chroot need root: the same step under sudo, as install_deps does.
    sudo env PREWARM_INTEL_ROOT="$INTEL_ROOT" "$0" intel-root
    return
  fi
  mkdir -p "$(dirname "$INTEL_ROOT")"
  exec 9>"$INTEL_ROOT.lock"
  echo "setup: waiting for the lock $INTEL_ROOT.lock"
  flock 9
  if intel_root_complete; then
    echo "setup: Intel sid root present: $INTEL_ROOT (made by a concurrent run)"
    exec 9>&-
    return
  fi
  local start=$SECONDS work="$INTEL_ROOT.partial" mirror
  mirror=$(debian_mirror)
  rm -rf "$work"
  if [ -d "$INTEL_ROOT" ]; then
    # An older complete root lacking a newly listed package: extend it in place of a rebuild.
    mv "$INTEL_ROOT" "$work"
  else
    echo "setup: making the Intel sid root $INTEL_ROOT from $mirror (once; ~5 min, ~850 MB)"
    nice debootstrap --variant=minbase sid "$work" "$mirror"
  fi
  # The mirror's sid Release file may be past its Valid-Until date.
  local apt=(apt-get -q -o Acquire::Check-Valid-Until=false)
  chroot "$work" "${apt[@]}" update
  local optional=() p
  for p in "${INTEL_ROOT_OPTIONAL[@]}"; do
    chroot "$work" apt-cache show "$p" >/dev/null 2>&1 && optional+=("$p")
  done
  chroot "$work" env DEBIAN_FRONTEND=noninteractive nice "${apt[@]}" install -y --no-install-recommends \
    "${INTEL_ROOT_PACKAGES[@]}" "${optional[@]}"
  chroot "$work" apt-get clean
  write_ocloc_wrapper "$work"
  # Written last: the package versions the root carries (NEO's cache key hashes IGC's identity).
  chroot "$work" dpkg-query -W -f='${Package} ${Version}\n' "${INTEL_ROOT_PACKAGES[@]}" "${optional[@]}" \
    >"$work/.complete.tmp"
  mv "$work/.complete.tmp" "$work/.complete"
  mv "$work" "$INTEL_ROOT"
  echo "setup: Intel sid root made in $((SECONDS - start)) s, $(du -sm "$INTEL_ROOT" | cut -f1) MB: $INTEL_ROOT"
  exec 9>&-
}

# A virtual environment of the Intel root's own Python 3.14 at ROOT/opt/NAME with the wheels pinned in
# REQUIREMENTS (every dependency listed, installed with --no-deps), for warm-ups that run on the virtual
# device: they need the root's glibc and driver. The root has no pip: pip runs from its own wheel
# (pinned) under the root's loader. Wheels are fetched by the host's pip for Python 3.14 and kept in
# $PYTHON_ENV_ROOT/WHEELS; the environment is checked by importing MODULE. `.complete` in the
# environment, a copy of REQUIREMENTS, is written last.
INTEL_ROOT_PIP=pip==26.3
make_intel_venv() { # NAME REQUIREMENTS WHEELS MODULE LABEL
  local venv="$INTEL_ROOT/opt/$1" requirements=$2 wheels="$PYTHON_ENV_ROOT/$3" module=$4 label=$5
  if [ "${SETUP_DRY_RUN:-}" = 1 ]; then
    echo "+ Intel $label environment: $INTEL_ROOT python3.14 -m venv $venv; pip install -r $requirements"
    return
  fi
  # The environment names the root by its absolute path (its python links there): a moved root
  # fails the -x test and the environment is made again.
  if [ -f "$venv/.complete" ] && cmp -s "$venv/.complete" "$requirements" && [ -x "$venv/bin/python" ]; then
    echo "setup: Intel $label environment $venv (reused)"
    return
  fi
  intel_root_complete || { echo "setup: warning: no Intel root $INTEL_ROOT: no $label environment" >&2; return 1; }
  local started=$SECONDS loader=("$INTEL_ROOT/lib64/ld-linux-x86-64.so.2" --library-path
    "$INTEL_ROOT/usr/lib/x86_64-linux-gnu:$INTEL_ROOT/lib/x86_64-linux-gnu")
  local platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64)
  echo "setup: creating the Intel $label environment $venv (pinned: $requirements)"
  mkdir -p "$wheels" "$INTEL_ROOT/opt"
  if rm -rf "$venv" &&
     python3 -m pip download --no-input --quiet --no-deps --only-binary=:all: --python-version 3.14 \
       "${platforms[@]}" -d "$wheels" -r "$requirements" "$INTEL_ROOT_PIP" &&
     "${loader[@]}" "$INTEL_ROOT/usr/bin/python3" -m venv --without-pip "$venv" &&
     "${loader[@]}" "$venv/bin/python" "$(ls "$wheels"/pip-*.whl | head -1)/pip" install --no-input --quiet \
       --no-index --no-deps --find-links "$wheels" -r "$requirements" &&
     "${loader[@]}" "$venv/bin/python" -c "import $module"; then
    cp "$requirements" "$venv/.complete"
    echo "setup: Intel $label environment ready in $((SECONDS - started)) s, $(du -sm "$venv" | cut -f1) MB"
  else
    echo "setup: warning: the Intel $label environment could not be made (PyPI unreachable?): the tests" \
         "that need it skip" >&2
    rm -rf "$venv"
    return 1
  fi
}

# Intel's SYCL runtime and dpctl (tests/python/intel-sycl-requirements.txt) at ROOT/opt/prewarm-sycl: a
# real SYCL application for the virtual device's command warm-up. Cost measured on the 2-core build
# machine: 255 MB downloaded (8 s), 21 s to install, 901 MB on disk; reused: 0 s.
make_intel_sycl() {
  make_intel_venv prewarm-sycl tests/python/intel-sycl-requirements.txt wheels-intel-sycl dpctl SYCL
}

# OpenVINO (tests/python/intel-openvino-requirements.txt) at ROOT/opt/prewarm-openvino: its GPU plugin
# compiles its OpenCL kernels through NEO on the virtual device. An environment of its own: the SYCL
# one stays as its tests pin it. 60 MB downloaded.
make_intel_openvino() {
  make_intel_venv prewarm-openvino tests/python/intel-openvino-requirements.txt wheels-intel-openvino openvino OpenVINO
}

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
  intel-root) install_deps; make_intel_root ;;
  intel-sycl) install_deps; make_intel_root; make_intel_sycl; make_intel_openvino ;;
  test | test-all)
    install_deps
    # Without the root its tests skip with the reason; the rest of the suite still runs.
    if [ "${PREWARM_INTEL_ROOT_SKIP:-}" != 1 ]; then
      # A process of its own: `set -e` does not hold inside a function called left of `||`.
      "$0" intel-root || echo "setup: warning: the Intel root $INTEL_ROOT was not made; the tests that need it skip" >&2
      [ "${PREWARM_INTEL_SYCL:-1}" = 0 ] || make_intel_sycl || true
      # Only the slow apps build (integration.intel_synth_build_apps) runs OpenVINO: `test`, which
      # leaves slow tests out, does not pay its 247 MB download.
      [ "${PREWARM_INTEL_SYCL:-1}" = 0 ] || [ "$1" = test ] || make_intel_openvino || true
    fi
    python_test_env
    cpu_apps_test_env
    configure_and_build "${test_build_options[@]}" ${TORCH_PYTHON:+-DPREWARM_TORCH_PYTHON="$TORCH_PYTHON"} \
      ${CPU_APPS_PYTHON:+-DPREWARM_CPU_APPS_PYTHON="$CPU_APPS_PYTHON"}
    exclude=()
    [ "$1" = test ] && exclude=(-LE slow)
    run ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 900 "${exclude[@]}"
    ;;
  all) install_deps; configure_and_build "${main_build_options[@]}"; main_job ;;
  *) echo "usage: ./setup.sh [all|test|test-all|deps|build|intel-root|intel-sycl]" >&2; exit 2 ;;
esac
