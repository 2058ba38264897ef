#!/usr/bin/env bash
# The layers of docs/architecture.md, checked two ways, in a few seconds:
#
# 1. The build refuses what a layer may not use: with the include directories
#    its target compiles with (those of the target, of the layers it links
#    and of their libraries, as CMake gives them in INCLUDES_DIR/<layer>), the
#    first public header of every layer it may use preprocesses, and that of
#    every other layer is not found; neither is the replica layer's header,
#    nor <mpi.h> outside comm (the layers above it use the engine).
# 2. The sources keep to the table: no file of a layer (include/rampart/<layer>/,
#    src/<layer>/) includes a layer it may not use or another layer's detail/,
#    save the exceptions below; apps/, bench/ and tools/ include no detail/.
#    This also catches what the build lets through: a layer sees, through
#    the public headers of those it uses, more than it may use itself.
#
# usage: check_layers.sh CXX SOURCE_DIR INCLUDES_DIR
set -euo pipefail
cxx=$1; src=$2; incs=$3

# The table: the layers each layer may use.
order="task resilience comm recovery store pgas replica"
declare -A uses=(
  [task]=""
  [resilience]="task"
  [comm]="task resilience"
  [recovery]="task resilience comm"
  [store]="task comm recovery"
  [pgas]="task comm recovery"
  [replica]=""
)
# What the code does beyond the table, and why:
# - comm uses recovery (its public headers and, from src/comm/, the private
#   ones in src/recovery/): the engine carries out recovery, so the two are
#   one target (CMakeLists.txt) and each sees the other;
# - recovery uses comm/detail: recovery's public calls ask the engine;
# - resilience uses task/detail: replay and replicate are built on the task
#   scheduler and its shared states.
declare -A carried=([comm]="recovery")
exceptions=" comm:recovery comm:recovery/src recovery:comm/detail resilience:task/detail "

fail=0
problem() { echo "FAIL: $*"; fail=1; }

# --- 1. the build -------------------------------------------------------
built=$(cat "$incs/layers")
is_built() { [[ $'\n'$built$'\n' == *$'\n'$1$'\n'* ]]; }
# The layers a layer's target shows: itself and, transitively, what it uses
# or carries, as far as they are built (not comm and recovery without MPI).
visible() {
  local todo=$1 seen=" " l
  while [[ -n ${todo// /} ]]; do
    read -r l todo <<< "$todo"
    [[ $seen == *" $l "* ]] && continue
    is_built "$l" || continue
    seen+="$l "
    todo+=" ${uses[$l]} ${carried[$l]:-}"
  done
  echo "$seen"
}
first_header() {
  find "$src/include/rampart/$1" -maxdepth 1 -type f \( -name '*.hpp' -o -name '*.h' \) -printf '%f\n' | sort | head -n 1
}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# Exit status and output of preprocessing `#include <$2>` with the include
# directories of layer $1.
preprocess() {
  local flags=() dir
  while IFS= read -r dir; do [[ -n $dir ]] && flags+=("-I$dir"); done < "$incs/$1"
  printf '#include <%s>\n' "$2" > "$work/probe.cpp"
  "$cxx" -std=c++20 -E "${flags[@]}" "$work/probe.cpp" -o /dev/null > "$work/out" 2>&1
}
not_found() { grep -Eq "$1(: No such file|' file not found)" "$work/out"; }

mpi_default=no
printf '#include <mpi.h>\n' > "$work/probe.cpp"
"$cxx" -E "$work/probe.cpp" -o /dev/null > /dev/null 2>&1 && mpi_default=yes

checks=0
for layer in $built; do
  [[ -v "uses[$layer]" ]] || { problem "layer $layer is not in the table of $0 (nor, perhaps, of docs/architecture.md)"; continue; }
  sees=$(visible "$layer")
  for other in $order; do
    [[ -d $src/include/rampart/$other ]] || continue
    header=rampart/$other/$(first_header "$other")
    checks=$((checks + 1))
    if [[ $sees == *" $other "* ]]; then
      preprocess "$layer" "$header" || { problem "$layer may use $other, but <$header> does not preprocess with its include directories:"; cat "$work/out"; }
    elif preprocess "$layer" "$header"; then
      problem "$layer may not use $other, but its target finds <$header>"
    elif ! not_found "$header"; then
      problem "$layer, <$header>: failed, but not because the header is hidden:"; cat "$work/out"
    fi
  done
  if [[ $mpi_default == no ]]; then
    checks=$((checks + 1))
    if [[ $layer == comm ]]; then
      preprocess comm mpi.h || problem "comm does not find <mpi.h>"
    elif preprocess "$layer" mpi.h; then
      problem "$layer finds <mpi.h>: only comm makes MPI calls"
    fi
  fi
done
echo "build: $checks includes checked for ${built//$'\n'/ }"

# --- 2. the sources -----------------------------------------------------
allowed() {  # allowed FROM TO (TO a layer, layer/detail, or layer/src: its private headers)
  local from=$1 to=$2
  [[ $exceptions == *" $from:$to "* ]] && return 0
  [[ $to == */* ]] && return 1
  [[ " ${uses[$from]} " == *" $to "* ]]
}
re_layer='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]rampart/([a-z_]+)(/detail/)?'
re_relative='^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./([a-z_.]+)/'
files=0
for layer in $order; do
  dirs=()
  for d in "$src/include/rampart/$layer" "$src/src/$layer"; do [[ -d $d ]] && dirs+=("$d"); done
  [[ ${#dirs[@]} -gt 0 ]] || continue
  while IFS= read -r file; do
    files=$((files + 1))
    while IFS= read -r line; do
      to=
      if [[ $line =~ $re_layer ]]; then
        to=${BASH_REMATCH[1]}${BASH_REMATCH[2]:+/detail}
        [[ ${BASH_REMATCH[1]} == rampart ]] && to=rampart.hpp
      elif [[ $line =~ $re_relative ]]; then
        to=${BASH_REMATCH[1]}/src  # another layer's private headers
      fi
      [[ -z $to || $to == "$layer" || $to == "$layer/"* ]] && continue
      allowed "$layer" "$to" || problem "${file#"$src"/}: $line ($layer may not use $to)"
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$file")
  done < <(find "${dirs[@]}" -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' \))
done
while IFS= read -r hit; do
  problem "$hit (another layer's detail/)"
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]rampart/[a-z_]+/detail/' \
           "$src/apps" "$src/bench" "$src/tools" 2>/dev/null | sed "s|^$src/||")
echo "sources: $files files of the layers, and apps/, bench/, tools/, checked"

[[ $fail == 0 ]] && echo "layers: all as in the table"
exit $fail
