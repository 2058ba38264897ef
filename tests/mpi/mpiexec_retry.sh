#!/usr/bin/env bash
# Runs mpiexec; runs it again (at most twice more) when Open MPI's launcher
# itself failed to start, before any rank of the program ran: PMIx's
# listener thread, a rare start-up failure of the runtime on these machines
# ("The PMIx server's listener thread failed to start"). Any other failure,
# and the output, pass through unchanged.
# usage: mpiexec_retry.sh MPIEXEC ARGS...
mpiexec=$1; shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for attempt in 1 2 3; do
    "$mpiexec" "$@" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 0 ] || ! grep -q "PMIx server's listener thread failed to start" "$out"; then
        exit "$rc"
    fi
    echo "mpiexec_retry.sh: the launcher failed to start (attempt $attempt); starting it again" >&2
    sleep 1
done
exit "$rc"
