#!/usr/bin/env bash
# Runs mpiexec; runs it again (at most twice more) when Open MPI's launcher
# itself failed to start, before any rank of the program ran (rampart-run's
# launch module, which rampart-run uses the same way). Any other failure,
# and the output, pass through unchanged.
# usage: mpiexec_retry.sh MPIEXEC ARGS...
exec python3 "$(dirname "$0")/../../tools/rampart_launch.py" "$@"
