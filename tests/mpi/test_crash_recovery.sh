#!/usr/bin/env bash
# A crash scenario of a distributed program under rampart-run with spares.
# The checksum must equal the fault-free run's, bit for bit, and the report
# must show that the ranks died and spares replaced them (or, when no spare is
# left, that the program failed naming the dead rank).
# usage: test_crash_recovery.sh RAMPART_RUN RANKS SPARES EXPECT [rampart-run options] -- PROGRAM [options]
#   EXPECT: "lost=1,2 used=2" for a recovered run, "fails=2" when no spare is left for rank 2;
#   "... resumed=59": a replacement must also resume after iteration 59 from a checkpoint
#   ("resumed=19|39": after one of them)
#   With rampart-run's --error-rate, the report must also show injected faults and replays.
set -uo pipefail
run=$1; ranks=$2; spares=$3; expect=$4; shift 4
opts=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ $# -gt 1 ] || { echo "FAIL: no program after --"; exit 1; }
shift; program=$1; shift
app=("$@" --threads 1 --json)

ref=$("$run" -n "$ranks" --threads 1 -- "$program" "${app[@]}" --error-rate 0 2>/dev/null | grep '^checksum' | awk '{print $2}')
[ -n "$ref" ] || { echo "FAIL: the fault-free run printed no checksum"; exit 1; }
echo "fault-free checksum $ref"

out=$("$run" -n "$ranks" --spares "$spares" --threads 1 --json "${opts[@]}" -- "$program" "${app[@]}" 2>&1)
code=$?
report=$(tail -n 1 <<<"$out")
grep -v NBC_Progress <<<"$out" | tail -n 12
field() { python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(eval(sys.argv[2]))" "$report" "$1"; }

# A hung rank (--hang) must have been killed by a survivor once declared dead.
if [[ " ${opts[*]} " == *" --hang "* ]]; then
    [ "$(field 'len(r["hangs_killed"]) > 0 and all(h["killed_after_ms"] is not None for h in r["hangs_killed"])')" == "True" ] ||
        { echo "FAIL: a hung rank was never killed: $(field 'r["hangs_killed"]')"; exit 1; }
    echo "hung ranks killed after: $(field '[h["killed_after_ms"] for h in r["hangs_killed"]]') ms"
fi

if [[ $expect == fails=* ]]; then
    dead=${expect#fails=}
    [ $code -ne 0 ] || { echo "FAIL: the program succeeded although no spare was left"; exit 1; }
    grep -q "failed ranks: $dead (no spare rank replaced them)" <<<"$out" || { echo "FAIL: the error does not name rank $dead"; exit 1; }
    echo "PASS: failed with the dead rank named"
    exit 0
fi
lost=$(sed -E 's/.*lost=([0-9,]*).*/\1/' <<<"$expect"); used=$(sed -E 's/.*used=([0-9]+).*/\1/' <<<"$expect")
[ $code -eq 0 ] || { echo "FAIL: exit code $code"; exit 1; }
got=$(grep '^checksum' <<<"$out" | awk '{print $2}')
[ "$got" == "$ref" ] || { echo "FAIL: checksum $got differs from the fault-free $ref"; exit 1; }
[ "$(field '",".join(map(str, r["ranks_lost"]))')" == "$lost" ] || { echo "FAIL: ranks lost $(field 'r["ranks_lost"]'), expected $lost"; exit 1; }
[ "$(field 'r["spares_used"]')" == "$used" ] || { echo "FAIL: spares used $(field 'r["spares_used"]'), expected $used"; exit 1; }
if [[ $expect == *resumed=* ]]; then
    at=$(sed -E 's/.*resumed=([0-9|]+).*/\1/' <<<"$expect")
    grep -Eq "resumes after iteration ($at) (.*)?from a checkpoint" <<<"$out" || { echo "FAIL: no replacement resumed after iteration $at"; exit 1; }
fi
[ "$(field 'r["ranks_without_report"]')" == "[]" ] || { echo "FAIL: ranks without a report: $(field 'r["ranks_without_report"]')"; exit 1; }
[ "$(field 'all(x["recover_ms"] is not None for x in r["recoveries"])')" == "True" ] || { echo "FAIL: a recovery without times"; exit 1; }
if [[ " ${opts[*]} " == *" --error-rate "* ]]; then
    [ "$(field 'r["faults_injected"] > 0 and r["tasks_replayed"] > 0')" == "True" ] ||
        { echo "FAIL: --error-rate injected $(field 'r["faults_injected"]') faults, $(field 'r["tasks_replayed"]') replays"; exit 1; }
    echo "launcher's soft errors: $(field 'r["faults_injected"]') injected, $(field 'r["tasks_replayed"]') replays"
fi
echo "PASS: checksum $got equals the fault-free run; lost $lost, spares used $used, recover_ms $(field 'r["recover_ms"]')"
