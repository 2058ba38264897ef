#!/usr/bin/env bash
# A program that fails on one rank ends the whole job: under rampart-run with
# a spare, the job ends with the failing rank's status and its message once,
# every other rank stopped, no spare used, and the report names the rank.
# usage: test_program_failure.sh RAMPART_RUN PROGRAM HOW EXIT_CODE MESSAGE
#   HOW: what test_program_failure.cpp does on rank 1; MESSAGE: a regex that must
#   match exactly one line of the output
set -uo pipefail
run=$1; program=$2; how=$3; want_code=$4; message=$5

out=$("$run" -n 4 --spares 1 --threads 1 --json -- "$program" "$how" 2>&1)
code=$?
grep -v NBC_Progress <<<"$out" | tail -n 12
report=$(tail -n 1 <<<"$out")
field() { python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(eval(sys.argv[2]))" "$report" "$1"; }

[ "$code" = "$want_code" ] || { echo "FAIL: exit code $code, expected $want_code"; exit 1; }
n=$(grep -cE "$message" <<<"$out")
[ "$n" = 1 ] || { echo "FAIL: the message /$message/ appears $n times, expected once"; exit 1; }
[ "$(field 'r["spares_used"]')" = 0 ] || { echo "FAIL: a spare replaced a rank whose program failed"; exit 1; }
if [ "$want_code" != 0 ]; then
    [ "$(field 'r["failed_ranks"]')" = "[1]" ] || { echo "FAIL: the report does not name rank 1 as failed"; exit 1; }
    [ "$(field 'r["ended"]')" = failed ] || { echo "FAIL: the report does not say the program failed"; exit 1; }
else
    [ "$(field 'r["ended"]')" = completed ] || { echo "FAIL: the report does not say the program completed"; exit 1; }
fi
echo "PASS: $how ended the job with exit code $code in $(field 'r["seconds"]') s"
