#!/usr/bin/env bash
# Runs a command and passes when it succeeds and prints at least MIN lines
# matching PATTERN (an extended regex with one group), all with the same
# group. usage: same_lines.sh MIN PATTERN -- COMMAND...
set -uo pipefail
min=$1; pattern=$2; shift 3
out=$("$@" 2>&1); code=$?
echo "$out"
[ $code -eq 0 ] || { echo "FAIL: exit code $code"; exit 1; }
values=$(sed -nE "s/.*${pattern}.*/\1/p" <<<"$out")
count=$(grep -c . <<<"$values")
[ "$count" -ge "$min" ] || { echo "FAIL: $count matching lines, want $min"; exit 1; }
[ "$(sort -u <<<"$values" | wc -l)" -eq 1 ] || { echo "FAIL: the lines disagree"; exit 1; }
echo "all $count agree: $(head -n 1 <<<"$values")"
