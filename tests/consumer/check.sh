#!/usr/bin/env bash
# Installs rampart from the build tree to a scratch prefix, then configures,
# builds and runs the consumer project against that install.
set -euo pipefail
build=$1; src=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$src" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$work/consumer" > /dev/null
"$work/consumer/consumer"
