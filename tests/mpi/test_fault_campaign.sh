#!/usr/bin/env bash
# A fault campaign of a distributed program under rampart-run: every run,
# each with random kills, must give the fault-free result (rampart-run exits
# 0 only then), and some kill must really have taken effect, since a campaign
# whose kills all came after the ranks had ended would prove nothing.
# usage: test_fault_campaign.sh RAMPART_RUN --campaign N [rampart-run options] -- PROGRAM [options]
set -uo pipefail
run=$1; shift
out=$("$run" --json "$@" 2>&1)
code=$?
grep -v '^{' <<<"$out"
summary=$(tail -n 1 <<<"$out")
[[ $summary == {* ]] || { echo "FAIL: the campaign printed no summary (exit code $code)"; exit 1; }
[ $code -eq 0 ] || { echo "FAIL: not every run gave the fault-free result (exit code $code)"; exit 1; }
fired=$(python3 -c 'import json,sys; print(sum(r["kills_fired"] for r in json.loads(sys.argv[1])["runs"]))' "$summary")
[ "$fired" -gt 0 ] || { echo "FAIL: no kill took effect"; exit 1; }
echo "PASS: every run identical to the fault-free run; $fired kills took effect"
