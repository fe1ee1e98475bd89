#!/usr/bin/env bash
# Format gate: every tracked C++ and CUDA source must be exactly what clang-format 14 (Debian 12's
# clang-format-14, pinned: other versions format differently) makes of it under .clang-format.
# Prints each file that differs and how to fix it; exits 1 on any difference.
#   bash scripts/check-format.sh          # check (scripts/test.sh runs this)
#   bash scripts/check-format.sh --fix    # rewrite the files in place
set -euo pipefail
cd "$(dirname "$0")/.."
tool="${CLANG_FORMAT:-clang-format-14}"
if ! command -v "$tool" > /dev/null; then
  echo "check-format: $tool not found (apt-get install clang-format-14; scripts/install-deps.sh does)" >&2
  exit 1
fi
version="$("$tool" --version)"
if [[ "$version" != *"version 14."* ]]; then
  echo "check-format: $tool is not clang-format 14 ($version): the gate is pinned to 14" >&2
  exit 1
fi

if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
else
  mapfile -t files < <(find . -path ./build -prune -o -path './build-*' -prune -o \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print)
fi

if [ "${1:-}" = "--fix" ]; then
  "$tool" -i --style=file "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi

differ=()
for file in "${files[@]}"; do
  if ! "$tool" --style=file "$file" | cmp -s - "$file"; then differ+=("$file"); fi
done
if [ ${#differ[@]} -ne 0 ]; then
  echo "check-format: ${#differ[@]} of ${#files[@]} files differ from .clang-format (clang-format 14):" >&2
  for file in "${differ[@]}"; do
    echo "  $file" >&2
    "$tool" --style=file "$file" | diff -u "$file" - | sed -n '3,12p' | sed 's/^/    /' >&2 || true
  done
  echo "check-format: fix with: bash scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files match .clang-format"
