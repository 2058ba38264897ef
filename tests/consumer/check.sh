#!/usr/bin/env bash
# Installs rampart from the build tree to a scratch prefix, then configures,
# builds and runs the consumer project against that install, and runs the
# installed rampart-run.
set -euo pipefail
build=$1; src=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$src" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$work/consumer" > /dev/null
"$work/consumer/consumer"
# rampart-run, installed with its modules, starts.
"$work/prefix/bin/rampart-run" --help | grep -q -- "--hosts" || { echo "installed rampart-run does not run"; exit 1; }
"$work/prefix/bin/rampart-cluster" --help > /dev/null
