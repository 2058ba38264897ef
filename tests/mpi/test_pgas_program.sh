#!/usr/bin/env bash
# An array program under rampart-run without spares: fault-free, then with
# each given set of kills (real SIGKILLs at iterations the program reports).
# Every faulty run must exit 0, give the fault-free checksum, lose the ranks
# it killed, and have a survivor say that it took over a dead rank's tasks.
# usage: test_pgas_program.sh RAMPART_RUN RANKS "KILLS" ["KILLS" ...] -- PROGRAM [args]
#   KILLS: rampart-run options, e.g. "--kill 1@iter3 --kill 3@iter9"
set -uo pipefail
run=$1; ranks=$2; shift 2
sets=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do sets+=("$1"); shift; done
shift
# A run that has not ended within its deadline is killed, after the state
# of its processes is printed: the test then fails with what it hung in.
deadline=${TEST_RUN_SECONDS:-35}  # three runs fit in the tests' 120 s
run_within_deadline() {
    local out_file; out_file=$(mktemp)
    setsid "$@" >"$out_file" 2>&1 &
    local pid=$! waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((deadline * 10)) ]; do sleep 0.1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
        { echo "FAIL: no end within $deadline s: $*"
          ps -s "$pid" -o pid,ppid,stat,etime,wchan:24,args
          tail -n 30 "$out_file"; } >&2
        kill -KILL -- -"$pid" 2>/dev/null
        rm -f "$out_file"
        exit 1
    fi
    wait "$pid"; local code=$?
    cat "$out_file"; rm -f "$out_file"
    return $code
}
checksum() { grep -o '"checksum": *"[0-9a-f]*"' <<<"$1" | tail -n 1 | grep -o '[0-9a-f]\{16\}'; }

ref_out=$(run_within_deadline "$run" -n "$ranks" --json -- "$@" --json) || { echo "FAIL: the fault-free run failed:"; tail -n 20 <<<"$ref_out"; exit 1; }
ref=$(checksum "$ref_out")
[ -n "$ref" ] || { echo "FAIL: no checksum in the fault-free run"; tail -n 20 <<<"$ref_out"; exit 1; }
echo "fault-free: checksum $ref"
for kills in "${sets[@]}"; do
    # shellcheck disable=SC2086
    out=$(run_within_deadline "$run" -n "$ranks" --json $kills -- "$@" --json)
    code=$?
    got=$(checksum "$out")
    wanted=$(grep -o '@' <<<"$kills" | grep -c .)
    lost=$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["ranks_lost"]))' "$(tail -n 1 <<<"$out")" 2>/dev/null)
    echo "$kills: exit $code, checksum $got, ranks lost ${lost:-none}"
    [ $code -eq 0 ] || { echo "FAIL: exit code $code"; tail -n 20 <<<"$out"; exit 1; }
    [ "$got" = "$ref" ] || { echo "FAIL: checksum $got differs from the fault-free $ref"; exit 1; }
    [ "${lost:-0}" = "$wanted" ] || { echo "FAIL: $wanted kills ordered, ${lost:-0} ranks lost"; tail -n 20 <<<"$out"; exit 1; }
    grep -qE 'rank [0-9]+: took over [1-9][0-9]* (tasks|tiles) of dead ranks' <<<"$out" ||
        { echo "FAIL: no survivor took over a dead rank's tasks"; exit 1; }
done
echo "PASS: ${#sets[@]} runs with kills, each checksum $ref"
