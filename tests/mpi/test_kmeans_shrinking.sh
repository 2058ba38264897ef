#!/usr/bin/env bash
# rampart-kmeans under rampart-run, with ranks killed (SIGKILL) and no spares:
# the survivors load the dead ranks' points from the store and go on. Each run
# must give the assignments of the fault-free run in one process, centers
# within 1e-9 relative of its centers, and report exactly the killed ranks as
# lost and, when ranks were killed, points reloaded from the store.
# usage: test_kmeans_shrinking.sh RAMPART_RUN KMEANS "RANKS..." [rampart-run options] -- [kmeans options]
#   RANKS: one run per number of ranks, e.g. "1 4"
set -uo pipefail
run=$1; kmeans=$2; rank_counts=$3; shift 3
opts=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
args=("$@" --threads 1 --json)

# The ranks that --kill names, sorted, as "1,3": all of them die (launcher's
# report); the program loses those killed before it ends (not R@end).
killed() { for ((i = 0; i < ${#opts[@]}; ++i)); do
               [ "${opts[$i]}" = "--kill" ] && [[ ${opts[$((i + 1))]} != *@end || $1 == all ]] &&
                   echo "${opts[$((i + 1))]%%@*}"
           done | sort -nu | paste -sd, -; }
dead=$(killed all); expect=$(killed program)

ref=$("$kmeans" "${args[@]}" | tail -n 1)
[[ $ref == {* ]] || { echo "FAIL: the run in one process printed no JSON"; exit 1; }
echo "one process, no faults: $(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["assignments"], r["centers_hash"])' "$ref")"

for n in $rank_counts; do
    out=$("$run" -n "$n" --threads 1 --json "${opts[@]}" -- "$kmeans" "${args[@]}" 2>&1)
    code=$?
    grep -v NBC_Progress <<<"$out" | grep -v '^{' | tail -n 12
    [ $code -eq 0 ] || { echo "FAIL: $n ranks: exit code $code"; exit 1; }
    verdict=$(python3 - "$ref" "$(tail -n 1 <<<"$out")" "$expect" "$dead" 2>&1 <<'EOF'
import json, sys
ref, report = json.loads(sys.argv[1]), json.loads(sys.argv[2])
want, dead = ([int(x) for x in a.split(",")] if a else [] for a in sys.argv[3:5])
r = report.get("result")
if not r:
    sys.exit("the program printed no JSON result")
if r["assignments"] != ref["assignments"]:
    sys.exit(f"assignments {r['assignments']} differ from the fault-free {ref['assignments']}")
worst = max(abs(a - b) / max(abs(a), abs(b), 1e-300) for a, b in zip(r["centers"], ref["centers"]))
if len(r["centers"]) != len(ref["centers"]) or worst > 1e-9:
    sys.exit(f"centers differ from the fault-free ones by {worst:.3g} relative")
if r["lost_ranks"] != want or report["ranks_lost"] != dead:
    sys.exit(f"lost ranks {r['lost_ranks']} (launcher: {report['ranks_lost']}), expected {want} ({dead})")
if want and r["points_reloaded"] <= 0:
    sys.exit("ranks were lost but no point was reloaded from the store")
bits = "bit-identical" if r["centers_hash"] == ref["centers_hash"] else f"within {worst:.3g}"
print(f"same assignments, centers {bits}; lost {want}, {r['points_reloaded']} points reloaded, "
      f"{r['seconds']:.3f} s (recovery {1e3 * r['recovery_seconds']:.1f} ms on the reporting rank)")
EOF
    ) || { echo "FAIL: $n ranks: $verdict"; exit 1; }
    echo "$n ranks: $verdict"
done
echo "PASS: every run equals the fault-free run in one process"
