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
job=$(echo "$dir"/job-*)  # the job's own folder
ls "$job/checkpoints-0"
[ -f "$job/checkpoints-0/iteration-79/rank-2.bin" ] || { echo "FAIL: the newest checkpoint (iteration 79) is not on disk"; exit 1; }
# Older ones are gone, or at least no longer complete (a rank that ended its
# write before the newest was complete kept its older file).
for r in 0 1 2; do [ -f "$job/checkpoints-0/iteration-59/rank-$r.bin" ] || older_incomplete=1; done
[ -n "${older_incomplete:-}" ] || { echo "FAIL: a checkpoint older than the newest complete one was kept whole"; exit 1; }
rm -rf "$job/checkpoints-0/iteration-59"

# The newest made incomplete, an older complete one beside it, as if rank 1
# had not finished writing iteration 79 when the job ended: iteration 59
# from a job of 80 iterations (its last checkpoint).
short=("${args[@]}"); short[5]=80
"$run" -n 3 --threads 1 --checkpoint-dir "$dir/short" -- "$stencil" "${short[@]}" > /dev/null 2>&1 || { echo "FAIL: the run of 80 iterations failed"; exit 1; }
cp -r "$dir"/short/job-*/checkpoints-0/iteration-59 "$job/checkpoints-0/"
mv "$job/checkpoints-0/iteration-79/rank-1.bin" "$job/checkpoints-0/iteration-79/rank-1.bin.partial"
# As rampart-run --restart starts the job again: in the same folder.
restart() { RAMPART_CHECKPOINT_DIR=$job RAMPART_RESTART=1 timeout 60 "$run" -n 3 --threads 1 -- "$stencil" "${args[@]}" 2>&1; }
out=$(restart)
echo "$out" | grep -a "resumes\|checksum"
[ "$(grep -ac 'resumes after iteration 59 from a checkpoint' <<<"$out")" -eq 3 ] ||
    { echo "FAIL: not every rank resumed from the complete checkpoint of iteration 59"; exit 1; }
[ "$(checksum <<<"$out")" = "$reference" ] || { echo "FAIL: the result differs from the fault-free $reference"; exit 1; }

rm -rf "$job/checkpoints-0"/iteration-[1-9]*[0-9]
mkdir -p "$job/checkpoints-0/iteration-59" && printf 'short' > "$job/checkpoints-0/iteration-59/rank-0.bin"
touch "$job/checkpoints-0/iteration-59/rank-1.bin" "$job/checkpoints-0/iteration-59/rank-2.bin"
out=$(restart)
code=$?
echo "$out" | grep -a "cut short" | head -1
[ $code -ne 0 ] && grep -aq "a record on disk is cut short" <<<"$out" ||
    { echo "$out"; echo "FAIL: a record cut short was not refused (exit code $code)"; exit 1; }
echo "PASS: resumed from the newest complete checkpoint on disk, fault-free result $reference"
