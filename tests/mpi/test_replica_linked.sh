#!/usr/bin/env bash
# Process replication by linking librampart_replica.so before MPI, without
# rampart-run or a preload: started by mpiexec with R x N processes and
# RAMPART_REPLICAS=R, the program must print the checksum of its native run
# (once per replica of rank 0).
# usage: test_replica_linked.sh MPIEXEC NATIVE_PROGRAM LINKED_PROGRAM RANKS REPLICAS [args]
set -uo pipefail
mpiexec=$1; native=$2; linked=$3; n=$4; r=$5; shift 5
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Started again if the launcher itself fails to start (mpiexec_retry.sh).
run=("$(dirname "$0")/mpiexec_retry.sh" "$mpiexec" --with-ft ulfm --oversubscribe --mca btl self,sm,tcp)
ref=$(timeout 60 "${run[@]}" -n "$n" "$native" "$@" 2>/dev/null | grep -o 'checksum [0-9a-f]*')
[ -n "$ref" ] || { echo "FAIL: the native run printed no checksum"; exit 1; }
out=$(timeout 60 "${run[@]}" -x RAMPART_REPLICAS="$r" -n $((n * r)) "$linked" "$@" 2>&1)
code=$?
got=$(grep -o 'checksum [0-9a-f]*' <<<"$out" | sort | uniq -c)
echo "native: $ref; linked, $r replicas: $got (exit $code)"
[ $code -eq 0 ] || { echo "FAIL: exit code $code"; tail -n 20 <<<"$out"; exit 1; }
[ "$(grep -c . <<<"$got")" -eq 1 ] && grep -q " $r $ref\$" <<<"$got" ||
    { echo "FAIL: expected '$ref' from each of the $r replicas of rank 0"; exit 1; }
echo "PASS: linked before MPI, every replica of rank 0 printed the native checksum"
