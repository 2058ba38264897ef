#!/usr/bin/env bash
# The README's demo: the 1D stencil without faults, then with replay under
# injected task failures, then with replay and checksums under silent bit
# flips, then without protection under the same bit flips. Last, the same
# stencil across 4 ranks and a spare under rampart-run, with task failures and
# one rank killed halfway: the spare takes its place.
set -euo pipefail
build=${1:-build}
stencil="$build/apps/rampart-stencil1d"
problem=(--subdomains 128 --points 2000 --iterations 1000 --steps 16)
args=("${problem[@]}" --threads 2)

field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p" | tail -n 1; }

run() {  # name, extra args...
    local name=$1; shift
    local out; out=$("$stencil" "${args[@]}" "$@" --json)
    local sum faults replays lost secs
    sum=$(field checksum <<<"$out"); faults=$(field faults_injected <<<"$out")
    replays=$(field replays <<<"$out"); secs=$(field seconds <<<"$out")
    printf '%-34s faults %5s  replays %5s  %6.2f s  checksum %s\n' "$name" "$faults" "$replays" "$secs" "$sum"
    echo "$sum" > "$tmp/$name"
}

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "rampart demo: 1D stencil, 128 subdomains x 2000 points, 1000 iterations x 16 steps"
run fault-free                 --variant dataflow
run replay+task-failures-1%    --variant replay          --error-rate 0.01 --seed 7
run replay+checksums+bitflips-1% --variant replay_checksum --error-rate 0.01 --seed 7
run unprotected+bitflips-1%    --variant dataflow        --error-rate 0.01 --seed 7
ref=$(cat "$tmp/fault-free")
ok=1
for n in replay+task-failures-1% replay+checksums+bitflips-1%; do
    if [ "$(cat "$tmp/$n")" = "$ref" ]; then echo "  $n: same answer as without faults"; else echo "  $n: DIFFERENT ANSWER"; ok=0; fi
done
if [ "$(cat "$tmp/unprotected+bitflips-1%")" != "$ref" ]; then
    echo "  unprotected+bitflips-1%: wrong answer, as expected without resilience"
fi

echo
echo "distributed: 4 ranks + 1 spare, replay with 1% task failures, rank 2 killed (SIGKILL) at iteration 500"
root=$(cd "$(dirname "$0")/.." && pwd)
out=$("$root/tools/rampart-run" -n 4 --spares 1 --threads 1 --kill 2@iter500 --json -- \
      "$stencil" "${problem[@]}" --threads 1 --variant replay --error-rate 0.01 --seed 7 2>&1 \
      | grep -v NBC_Progress)
grep -E '^(faults|handled|time|checksum)' <<<"$out" | sed 's/^/  /'
grep -E '^  (ranks lost|recovery|messages)' <<<"$out"
sum=$(grep '^checksum' <<<"$out" | awk '{print $2}')
if [ "$sum" = "$ref" ]; then echo "  distributed with a crash: same answer as without faults"; else echo "  distributed with a crash: DIFFERENT ANSWER"; ok=0; fi
[ $ok = 1 ]
