#!/usr/bin/env bash
# Runs an example under rampart-run without faults and, when fault options
# are given, again with them. Passes only if every run exits with 0 and
# prints exactly one "result" line, the faulty run's equals the fault-free
# run's, and the faulty run's report shows the fault: the ranks killed, the
# spares used, the ranks lost for good (with no spare), and a line the
# program prints when it recovers.
#
# usage: check_example.sh RAMPART_RUN RANKS LOST SPARES_USED MESSAGE [rampart-run options] -- PROGRAM [args]
#   LOST: the killed ranks ("1", "1,2"); SPARES_USED: how many spares took over;
#   MESSAGE: an extended regex the faulty run must print ("" for none).
#   Without rampart-run options only the fault-free run is made (LOST, SPARES_USED, MESSAGE unused).
set -uo pipefail
run=$1; ranks=$2; lost=$3; used=$4; message=$5; shift 5
opts=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ $# -gt 1 ] || { echo "FAIL: no program after --"; exit 1; }
shift

results() { grep -E '^result( |$)' <<<"$1"; }

ref_out=$("$run" -n "$ranks" --threads 1 -- "$@" 2>&1)
code=$?
ref=$(results "$ref_out")
if [ $code -ne 0 ] || [ "$(grep -c . <<<"$ref")" != 1 ]; then
    echo "FAIL: the fault-free run exited with $code and printed $(grep -c . <<<"$ref") result lines:"
    echo "$ref_out" | tail -n 20
    exit 1
fi
echo "fault-free: $ref"
if [ ${#opts[@]} -eq 0 ]; then
    echo "PASS: $ref"
    exit 0
fi

out=$("$run" -n "$ranks" --threads 1 --json "${opts[@]}" -- "$@" 2>&1)
code=$?
got=$(results "$out")
report=$(tail -n 1 <<<"$out")
grep -v '^{' <<<"$out" | grep -E '^(rampart-run|  |rank )'
field() { python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(eval(sys.argv[2]))" "$report" "$1" 2>/dev/null; }

fail() { echo "FAIL: $*"; echo "$out" | grep -v '^{' | tail -n 20; exit 1; }
[ $code -eq 0 ] || fail "the run with ${opts[*]} exited with $code"
[ "$got" = "$ref" ] || fail "the run with ${opts[*]} printed '$got', not the fault-free '$ref'"
[ "$(field '",".join(map(str, r["ranks_lost"]))')" = "$lost" ] || fail "ranks killed: $(field 'r["ranks_lost"]'), expected $lost"
[ "$(field 'r["spares_used"]')" = "$used" ] || fail "spares used: $(field 'r["spares_used"]'), expected $used"
# With no spare for them, the killed ranks must have been lost for good.
for_good=$(field '",".join(map(str, sorted(l for x in r["recoveries"] for l in x["lost"])))')
[ "$used" != 0 ] || [ "$for_good" = "$lost" ] || fail "ranks lost for good: '$for_good', expected $lost"
[ -z "$message" ] || grep -Eq "$message" <<<"$out" || fail "the run with ${opts[*]} did not print /$message/"
echo "PASS: $got with ${opts[*]}, as in the fault-free run; ranks killed $lost, spares used $used"
