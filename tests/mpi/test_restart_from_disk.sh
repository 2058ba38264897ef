#!/usr/bin/env bash
# Checkpoints on disk, on one machine: a run with --checkpoint-dir leaves its
# newest complete checkpoint there, and no older one whole. With the newest
# made incomplete (one rank's file only half-written, never renamed) and an
# older complete one beside it, a job started again
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
# usage: newest_complete JOB_FOLDER; prints its iteration
newest_complete() {
    local it
    for it in $(ls "$1/checkpoints-0" | sed -n 's/^iteration-//p' | sort -rn); do
        [ -f "$1/checkpoints-0/iteration-$it/rank-0.bin" ] && [ -f "$1/checkpoints-0/iteration-$it/rank-1.bin" ] &&
            [ -f "$1/checkpoints-0/iteration-$it/rank-2.bin" ] && { echo "$it"; return 0; }
    done
    return 1
}
# usage: run_with_checkpoints FOLDER ITERATIONS; prints the job's folder, and
# the disk writes of its report to the file FOLDER.written
run_with_checkpoints() {
    local a=("${args[@]}"); a[5]=$2
    "$run" -n 3 --threads 1 --checkpoint-dir "$1" --json -- "$stencil" "${a[@]}" 2> /dev/null | tail -1 |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["checkpoints_on_disk"]["written"])' > "$1.written" &&
        echo "$1"/job-*
}
# Saves at iterations 19, 39, 59 and 79, each written by every rank (no rank
# skips one, whatever its disk's pace): the newest complete one is 79.
job=$(run_with_checkpoints "$dir/full" 100) || { echo "FAIL: the run with --checkpoint-dir failed"; exit 1; }
[ "$(cat "$dir/full.written")" -eq 12 ] ||
    { echo "FAIL: the ranks wrote $(cat "$dir/full.written") checkpoint files, not 3 x 4"; exit 1; }
newest=$(newest_complete "$job")
[ "${newest:-0}" -eq 79 ] || { ls -R "$job"; echo "FAIL: the newest complete checkpoint is '${newest:-}', not 79"; exit 1; }
ls "$job/checkpoints-0"
# Older ones are gone, or at least no longer complete (a rank that ended its
# write before the newest was complete kept its older file).
for it in $(ls "$job/checkpoints-0" | sed -n 's/^iteration-//p'); do
    [ "$it" -ge "$newest" ] && continue
    [ -f "$job/checkpoints-0/iteration-$it/rank-0.bin" ] && [ -f "$job/checkpoints-0/iteration-$it/rank-1.bin" ] &&
        [ -f "$job/checkpoints-0/iteration-$it/rank-2.bin" ] &&
        { echo "FAIL: checkpoint $it, older than the newest complete one ($newest), was kept whole"; exit 1; }
    rm -rf "$job/checkpoints-0/iteration-$it"
done

# The newest made incomplete, an older complete one beside it, as if rank 1
# had not finished writing it when the job ended: the newest complete one of
# a job that ends at that iteration (so its checkpoints are all older).
short=$(run_with_checkpoints "$dir/short" "$((newest + 1))") || { echo "FAIL: the shorter run failed"; exit 1; }
older=$(newest_complete "$short")
[ "${older:-0}" -eq 59 ] || { echo "FAIL: the shorter run's newest complete checkpoint is '${older:-}', not 59"; exit 1; }
cp -r "$short/checkpoints-0/iteration-$older" "$job/checkpoints-0/"
mv "$job/checkpoints-0/iteration-$newest/rank-1.bin" "$job/checkpoints-0/iteration-$newest/rank-1.bin.partial"
# As rampart-run --restart starts the job again: in the same folder.
restart() { RAMPART_CHECKPOINT_DIR=$job RAMPART_RESTART=1 timeout 60 "$run" -n 3 --threads 1 -- "$stencil" "${args[@]}" 2>&1; }
out=$(restart)
echo "$out" | grep -a "resumes\|checksum"
[ "$(grep -ac "resumes after iteration $older from a checkpoint" <<<"$out")" -eq 3 ] ||
    { echo "$out"; ls -lR "$job"; echo "FAIL: not every rank resumed from the complete checkpoint of iteration $older"; exit 1; }
[ "$(checksum <<<"$out")" = "$reference" ] || { echo "$out"; echo "FAIL: the result differs from the fault-free $reference"; exit 1; }

# A rank writes over an old file of its own, kept aside, rather than a new
# one: a longer one (here random bytes) is cut to the record's length. As
# before, the job resumes from $older and writes $newest, here over these;
# a job started again from it gives the fault-free result.
rm -rf "$job/checkpoints-0"/iteration-*
cp -r "$short/checkpoints-0/iteration-$older" "$job/checkpoints-0/"
for r in 0 1 2; do head -c 3000000 /dev/urandom > "$job/checkpoints-0/rank-$r.bin.spare"; done
out=$(restart)
[ "$(grep -ac "resumes after iteration $older from a checkpoint" <<<"$out")" -eq 3 ] ||
    { echo "$out"; echo "FAIL: the job with old files to write over did not resume from $older"; exit 1; }
for r in 0 1 2; do
    [ "$(stat -c %s "$job/checkpoints-0/rank-$r.bin.spare" 2>/dev/null)" != 3000000 ] &&
        [ "$(stat -c %s "$job/checkpoints-0/iteration-$newest/rank-$r.bin")" = \
        "$(stat -c %s "$short/checkpoints-0/iteration-$older/rank-$r.bin")" ] ||
        { ls -lR "$job/checkpoints-0"; echo "FAIL: rank $r did not write iteration $newest over its old file, cut to length"; exit 1; }
done
out=$(restart)
[ "$(grep -ac "resumes after iteration $newest from a checkpoint" <<<"$out")" -eq 3 ] && [ "$(checksum <<<"$out")" = "$reference" ] ||
    { echo "$out"; echo "FAIL: resumed from the checkpoint written over old files, not the fault-free $reference"; exit 1; }
echo "written over old files: iteration $newest resumed from, result $reference"

rm -rf "$job/checkpoints-0"/iteration-[1-9]*[0-9]
mkdir -p "$job/checkpoints-0/iteration-59" && printf 'short' > "$job/checkpoints-0/iteration-59/rank-0.bin"
touch "$job/checkpoints-0/iteration-59/rank-1.bin" "$job/checkpoints-0/iteration-59/rank-2.bin"
out=$(restart)
code=$?
echo "$out" | grep -a "cut short" | head -1
[ $code -ne 0 ] && grep -aq "a record on disk is cut short" <<<"$out" ||
    { echo "$out"; ls -lR "$job/checkpoints-0"; echo "FAIL: a record cut short was not refused (exit code $code)"; exit 1; }
echo "PASS: resumed from the newest complete checkpoint on disk, fault-free result $reference"
