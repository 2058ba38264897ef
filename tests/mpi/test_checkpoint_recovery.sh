#!/usr/bin/env bash
# Crash recovery from checkpoints of the channel counts (test_checkpoint_ring.cpp):
# rank 1 of 4 is SIGKILLed at iteration 35, checkpoints every 10 iterations.
#   resume: the spare resumes from checkpoint 30. Every rank's result must
#           equal the fault-free run's bit for bit; survivors must re-send
#           fewer messages than in the same crash without checkpoints, and
#           their send logs must stay small (trimmed at each checkpoint).
#   forget: the spare ignores the checkpoints and starts from the beginning,
#           which the trimmed logs cannot serve: the job must fail, soon, with
#           an error that says messages are lost for good.
# usage: test_checkpoint_recovery.sh RAMPART_RUN PROGRAM resume|forget
set -uo pipefail
run=$1; program=$2; mode=$3
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
iterations=60; every=10; doubles=1000  # 8 KB messages: beyond the eager limit, so duplicates must be received
kill=(--kill 1@iter35)

sums() { grep -E '^rank [0-9]+ checksum' <<<"$1" | sort; }
field() { python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(eval(sys.argv[2]))" "$2" "$1"; }

if [ "$mode" = forget ]; then
    mkdir "$dir/forget"
    # Every rank aborts on its error (mpiexec then returns 0 all the same).
    out=$("$run" -n 4 --spares 1 --threads 1 "${kill[@]}" -- "$program" "$dir/forget" $iterations $every $doubles --forget 2>&1)
    grep -E '^rank [0-9]|^rampart' <<<"$out" | cut -c 1-240
    ! grep -q 'checksum' <<<"$out" || { echo "FAIL: a rank finished although the replacement could not get its messages"; exit 1; }
    grep -q 'lost for good' <<<"$out" || { echo "FAIL: no error saying that messages are lost for good"; exit 1; }
    grep -q 'rank 1 (incarnation 1) failed: .*irecv from rank [02] with tag [12] failed: messages 0 to' <<<"$out" ||
        { echo "FAIL: the replacement's receive did not fail naming the channel"; exit 1; }
    echo "PASS: a replacement without the checkpoint fails with the lost messages named"
    exit 0
fi

mkdir "$dir/reference" "$dir/checkpoints" "$dir/none"
ref=$("$run" -n 4 --threads 1 -- "$program" "$dir/reference" $iterations 0 $doubles 2>/dev/null)
[ "$(sums "$ref" | wc -l)" = 4 ] || { echo "FAIL: the fault-free run printed no checksums"; echo "$ref"; exit 1; }
echo "fault-free:"; sums "$ref"

crash() {  # directory, checkpoint interval
    "$run" -n 4 --spares 1 --threads 1 --json "${kill[@]}" -- "$program" "$dir/$1" $iterations "$2" $doubles 2>&1
}
fail=0
for variant in checkpoints none; do
    every_here=$([ $variant = checkpoints ] && echo $every || echo 0)
    out=$(crash $variant "$every_here")
    code=$?
    report=$(tail -n 1 <<<"$out")
    grep -E '^rank 1 resumed|FAIL' <<<"$out"
    [ $code -eq 0 ] || { echo "FAIL ($variant): exit code $code"; grep -v NBC_Progress <<<"$out" | tail -n 20; exit 1; }
    [ "$(sums "$out")" = "$(sums "$ref")" ] || { echo "FAIL ($variant): results differ from the fault-free run"; sums "$out"; fail=1; }
    ! grep -q FAIL <<<"$out" || fail=1
    if [ $variant = checkpoints ]; then
        grep -q '^rank 1 resumed at iteration 30$' <<<"$out" || { echo "FAIL: the replacement did not resume at 30"; fail=1; }
    fi
    [ "$(field '",".join(map(str, r["ranks_lost"]))' "$report")" = 1 ] || { echo "FAIL ($variant): ranks lost $(field 'r["ranks_lost"]' "$report")"; fail=1; }
    [ "$(field 'r["spares_used"]' "$report")" = 1 ] || { echo "FAIL ($variant): spares used $(field 'r["spares_used"]' "$report")"; fail=1; }
    declare "resent_$variant=$(field 'r["messages_resent"]' "$report")"
    declare "log_$variant=$(field 'r["send_log_bytes"]' "$report")"
    echo "$variant: messages re-sent $(field 'r["messages_resent"]' "$report"), send log bytes at the end $(field 'r["send_log_bytes"]' "$report")"
done
[ "$fail" = 0 ] || exit 1
grep -q . <<<"$resent_checkpoints" && [ "$resent_checkpoints" -gt 0 ] ||
    { echo "FAIL: nothing was re-sent after the crash with checkpoints"; exit 1; }
[ "$resent_checkpoints" -lt "$resent_none" ] ||
    { echo "FAIL: $resent_checkpoints messages re-sent with checkpoints, not fewer than $resent_none without"; exit 1; }
[ "$log_checkpoints" -lt "$log_none" ] ||
    { echo "FAIL: send logs of $log_checkpoints bytes with checkpoints, not less than $log_none without"; exit 1; }
echo "PASS: equal to the fault-free run; re-sent $resent_checkpoints messages instead of $resent_none," \
     "send logs $log_checkpoints bytes instead of $log_none"
