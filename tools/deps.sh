#!/bin/bash
# Dependencies of movebench in one place.
#   tools/deps.sh install   apt-get install them (root), else print the list and fail
#   tools/deps.sh check     verify them; name exactly what is missing
#   tools/deps.sh list      print the Debian package list
set -u

# Debian packages: build, run, test (Slurm, fio, plotting; PyTorch for
# reproduce/nn's peer; sshd, iproute2 and ping for the namespaced hosts of
# tools/vcluster, whose tests skip without them, so `check` below asks only
# for what the build needs).
PACKAGES=(
  build-essential pkg-config git
  openmpi-bin libopenmpi-dev libucx-dev ucx-utils
  libhdf5-openmpi-dev hdf5-tools
  libpapi-dev papi-tools
  liburing-dev libopenblas-dev
  libscalapack-openmpi-dev
  libhwloc-dev hwloc
  libjansson-dev
  slurm-wlm munge libpmix-dev
  fio
  openssh-server openssh-client iproute2 iputils-ping util-linux
  python3-h5py python3-matplotlib python3-numpy python3-venv
  python3-torch
)

# pkg-config module -> Debian package that provides it.
declare -A PC_PKG=(
  [ompi-c]=libopenmpi-dev [hdf5-openmpi]=libhdf5-openmpi-dev [papi]=libpapi-dev
  [hwloc]=libhwloc-dev [ucx]=libucx-dev [liburing]=liburing-dev [openblas]=libopenblas-dev
  [jansson]=libjansson-dev
)
# command -> Debian package.
declare -A CMD_PKG=(
  [mpicc]=libopenmpi-dev [mpirun]=openmpi-bin [pkg-config]=pkg-config [h5dump]=hdf5-tools
)

cmd=${1:-check}
case "$cmd" in
list)
  printf '%s\n' "${PACKAGES[@]}"
  ;;
install)
  if [ "$(id -u)" != 0 ]; then
    echo "make deps: not root; install these Debian packages:" >&2
    echo "  apt-get install ${PACKAGES[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q || exit 1
  apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" || exit 1
  ;;
check)
  missing=()
  for c in "${!CMD_PKG[@]}"; do
    command -v "$c" >/dev/null 2>&1 || missing+=("${CMD_PKG[$c]} (command $c)")
  done
  if command -v pkg-config >/dev/null 2>&1; then
    for m in "${!PC_PKG[@]}"; do
      pkg-config --exists "$m" || missing+=("${PC_PKG[$m]} (pkg-config $m)")
    done
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "movebench: missing dependencies:" >&2
    printf '  %s\n' "${missing[@]}" | sort -u >&2
    echo "run 'make deps' as root, or: apt-get install $(printf '%s\n' "${missing[@]}" | cut -d' ' -f1 | sort -u | tr '\n' ' ')" >&2
    exit 1
  fi
  ;;
*)
  echo "usage: tools/deps.sh install|check|list" >&2
  exit 2
  ;;
esac
