#!/usr/bin/env bash
# Regenerates the golden outputs (tests/data/golden/) from a build: runs every command of
# tests/data/golden/commands.txt with BUILD/scalebench (default build/) on fresh copies of the
# committed fixtures and writes what it printed and the data files it wrote, normalised as
# commands.txt says. tests/golden/test_golden_outputs.cpp checks a build against these files.
#
# Regenerate ONLY for an intended output change, and say in the commit message what changed in
# the output and why (the diff of tests/data/golden/ shows it; review it line by line). A refactor
# (moving code, renaming files) must pass the test without regenerating anything.
#
# usage: scripts/update-golden.sh [BUILD_DIR]     needs gnuplot and sqlite3
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
binary="$build/scalebench"
golden="$root/tests/data/golden"
manifest="$golden/commands.txt"
for tool in gnuplot sqlite3 perl; do
  command -v "$tool" >/dev/null || { echo "update-golden: $tool not found" >&2; exit 1; }
done
[[ -x $binary ]] || { echo "update-golden: no $binary: build it first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fixtures=()  # "NEW FROM SQL" lines
names=()
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  if [[ $line == @fixture\ * ]]; then fixtures+=("${line#@fixture }"); else names+=("$line"); fi
done <"$manifest"

# Stale files go: what is left afterwards is exactly what the commands produce.
find "$golden" -maxdepth 1 -type f ! -name commands.txt -delete

for entry in "${names[@]}"; do
  read -r name needs args <<<"$entry"
  read -r -a argv <<<"$args"  # split on spaces, never globbed
  dir="$work/$name"
  mkdir "$dir"
  cp "$root"/tests/data/db/*.db "$root"/tests/data/cli/*.csv "$dir"/
  for fixture in "${fixtures[@]}"; do
    read -r new from sql <<<"$fixture"
    cp "$dir/$from" "$dir/$new"
    sqlite3 "$dir/$new" "$sql"
  done
  if ! (cd "$dir" && "$binary" "${argv[@]}" >"$work/$name.out" 2>"$work/$name.err"); then
    echo "update-golden: $name failed: scalebench $args" >&2
    cat "$work/$name.err" >&2
    exit 1
  fi
  # The one normalisation (commands.txt): gnuplot's SVG inside an HTML page.
  perl -0777 -pe "s{<svg\\b.*?</svg>}{<svg><!-- gnuplot's SVG, left out of the golden output --></svg>}gs" \
    "$work/$name.out" >"$golden/$name.out"
  [[ -s $work/$name.err ]] && cp "$work/$name.err" "$golden/$name.err"
  for ext in dat gp; do
    [[ -f $dir/$name.$ext ]] && cp "$dir/$name.$ext" "$golden/$name.$ext"
  done
  echo "$name ($needs): scalebench $args"
done
echo "update-golden: $(find "$golden" -maxdepth 1 -type f ! -name commands.txt | wc -l) files in $golden"
