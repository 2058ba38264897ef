#!/usr/bin/env bash
# The README's demo: the 1D stencil without faults, then with replay under
# injected task failures, then with replay and checksums under silent bit
# flips, then without protection under the same bit flips.
set -euo pipefail
build=${1:-build}
stencil="$build/apps/rampart-stencil1d"
args=(--subdomains 128 --points 2000 --iterations 1000 --steps 16 --threads 2)

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
[ $ok = 1 ]
