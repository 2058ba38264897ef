#!/usr/bin/env bash
# rampart-run kills logical rank 1 of 3 at iteration 10 with SIGKILL. Without
# spare ranks the program must fail quickly with an error naming rank 1, and
# the launcher's report must list rank 1 as lost. A run without --kill loses
# nothing.
# usage: test_kill_without_spares.sh RAMPART_RUN STENCIL
set -uo pipefail
run=$1; stencil=$2
args=(--subdomains 48 --iterations 100 --threads 1 --variant replay --json)

ok=$("$run" -n 3 --threads 1 --json -- "$stencil" "${args[@]}" 2>/dev/null | tail -n 1)
echo "no kill: $ok"
grep -q '"ranks_lost": \[\]' <<<"$ok" || { echo "FAIL: a rank was lost without --kill"; exit 1; }
grep -q '"exit_code": 0' <<<"$ok" || { echo "FAIL: the run without --kill failed"; exit 1; }

out=$("$run" -n 3 --threads 1 --kill 1@iter10 --json -- "$stencil" "${args[@]}" 2>&1)
code=$?
echo "$out" | tail -n 8
[ $code -ne 0 ] || { echo "FAIL: the program succeeded although rank 1 died"; exit 1; }
grep -q 'failed ranks: 1 (no spare rank replaced them)' <<<"$out" || { echo "FAIL: the error does not name rank 1"; exit 1; }
grep -q '"ranks_lost": \[1\]' <<<"$(tail -n 1 <<<"$out")" || { echo "FAIL: the report does not list rank 1 as lost"; exit 1; }
echo "killed rank named and reported"
