#!/usr/bin/env bash
# Checkpoints on disk, on one machine: a run with --checkpoint-dir leaves its
# two newest checkpoints there. With the newest made incomplete (one rank's
# file only half-written, never renamed), a job started again
# (RAMPART_RESTART=1, as rampart-run --restart starts it) resumes from the
# older one on every rank, and its result is the fault-free one. A record
# cut short on disk is refused with a message that says so.
# usage: test_restart_from_disk.sh RAMPART_RUN STENCIL
set -uo pipefail
run=$1; stencil=$2
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
args=(--subdomains 24 --points 2000 --iterations 100 --steps 16 --threads 1 --checkpoint-every 20)
checksum() { grep -a '^checksum' | awk '{print $2}'; }

reference=$("$run" -n 3 --threads 1 -- "$stencil" "${args[@]}" 2>/dev/null | checksum)
"$run" -n 3 --threads 1 --checkpoint-dir "$dir" -- "$stencil" "${args[@]}" > /dev/null 2>&1 || { echo "FAIL: the run with --checkpoint-dir failed"; exit 1; }
ls "$dir/checkpoints-0"
[ -f "$dir/checkpoints-0/iteration-79/rank-2.bin" ] && [ -f "$dir/checkpoints-0/iteration-59/rank-2.bin" ] ||
    { echo "FAIL: the two newest checkpoints (iterations 59 and 79) are not on disk"; exit 1; }
[ ! -e "$dir/checkpoints-0/iteration-39" ] || { echo "FAIL: an older checkpoint was kept"; exit 1; }

mv "$dir/checkpoints-0/iteration-79/rank-1.bin" "$dir/checkpoints-0/iteration-79/rank-1.bin.partial"
out=$(RAMPART_RESTART=1 "$run" -n 3 --threads 1 --checkpoint-dir "$dir" -- "$stencil" "${args[@]}" 2>&1)
echo "$out" | grep -a "resumes\|checksum"
[ "$(grep -ac 'resumes after iteration 59 from a checkpoint' <<<"$out")" -eq 3 ] ||
    { echo "FAIL: not every rank resumed from the complete checkpoint of iteration 59"; exit 1; }
[ "$(checksum <<<"$out")" = "$reference" ] || { echo "FAIL: the result differs from the fault-free $reference"; exit 1; }

rm -rf "$dir/checkpoints-0/iteration-79" "$dir/checkpoints-0"/iteration-9*
head -c 10 "$dir/checkpoints-0/iteration-59/rank-0.bin" > "$dir/short" && mv "$dir/short" "$dir/checkpoints-0/iteration-59/rank-0.bin"
out=$(RAMPART_RESTART=1 timeout 60 "$run" -n 3 --threads 1 --checkpoint-dir "$dir" -- "$stencil" "${args[@]}" 2>&1)
code=$?
echo "$out" | grep -a "cut short" | head -1
[ $code -ne 0 ] && grep -aq "a record on disk is cut short" <<<"$out" ||
    { echo "FAIL: a record cut short was not refused (exit code $code)"; exit 1; }
echo "PASS: resumed from the newest complete checkpoint on disk, fault-free result $reference"
