#!/usr/bin/env bash
# A distributed program on 2 and 4 ranks, with faults, must print the checksum
# of the single-process fault-free run; the faults must have been injected and
# handled; without resilience the same faults change the answer.
# usage: test_across_ranks.sh MPIEXEC PROGRAM UNPROTECTED_VARIANT "RESILIENT VARIANTS" -- program args
set -euo pipefail
mpiexec=$1; program=$2; unprotected=$3; variants=$4; shift 4; [ "${1:-}" = "--" ] && shift
args=("$@" --threads 1 --json)
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p" | tail -n 1; }
run() { "$(dirname "$0")/mpiexec_retry.sh" "$mpiexec" --with-ft ulfm --oversubscribe --mca btl self,sm,tcp --mca coll ^han -n "$1" "$program" "${args[@]}" "${@:2}"; }

ref=$("$program" "${args[@]}" | field checksum)
echo "reference (1 process, no faults): $ref"
fail=0
for n in 2 4; do
    for v in $variants; do
        out=$(run "$n" --variant "$v" --error-rate 0.03 --seed 11)
        sum=$(field checksum <<<"$out"); faults=$(field faults_injected <<<"$out")
        replays=$(field replays <<<"$out"); lost=$(field votes_lost <<<"$out")
        echo "$n ranks $v: checksum $sum, faults $faults, replays $replays, votes lost $lost"
        [ "$sum" = "$ref" ] || { echo "  WRONG ANSWER"; fail=1; }
        [ "$faults" -gt 0 ] || { echo "  no fault was injected"; fail=1; }
        [ $((replays + lost)) -gt 0 ] || { echo "  no fault was handled"; fail=1; }
    done
    bad=$(run "$n" --variant "$unprotected" --error-rate 0.03 --seed 11 | field checksum)
    [ "$bad" != "$ref" ] || { echo "  $n ranks: unprotected run with faults gave the right answer: faults not injected?"; fail=1; }
done
[ $fail = 0 ] && echo "across ranks: all equal to the fault-free run"
