#!/usr/bin/env bash
# scripts/check-includes.sh against a copy of report/, plotting/ and scaling/: clean, it passes;
# with one include planted against each rule, it fails and names the rule.
# Usage: test_check_includes.sh SOURCE_DIR
set -euo pipefail
source_dir="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fresh() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  for dir in report plotting scaling; do cp -r "$source_dir/$dir" "$work/tree/"; done
}
fresh
bash "$source_dir/scripts/check-includes.sh" "$work/tree" >/dev/null || {
  echo "FAIL: the copied tree does not pass"
  exit 1
}
failures=0
plant() {  # FILE INCLUDE EXPECTED-WORDS
  local file="$1" include="$2" expected="$3" output
  fresh
  printf '#include "%s"\n' "$include" >>"$work/tree/$file"
  if output=$(bash "$source_dir/scripts/check-includes.sh" "$work/tree" 2>&1); then
    echo "FAIL: $file including $include passed the check"
    failures=$((failures + 1))
  elif ! grep -q "$expected" <<<"$output"; then
    echo "FAIL: $file including $include: the message does not say '$expected': $output"
    failures=$((failures + 1))
  else
    echo "ok: $file including $include is refused"
  fi
}
plant report/export/exporters.hpp db/database.hpp "report/export/"
plant report/export/exporters.cpp report/data/instances.hpp "report/export/"
plant report/analysis/report.hpp report/export/exporters.hpp "report/analysis/"
plant report/analysis/report.cpp db/database.hpp "report/analysis/"
plant report/data/run_set.cpp report/export/format.hpp "report/data/"
plant report/data/instances.hpp report/analysis/report.hpp "report/data/"
plant plotting/figure.cpp cli/commands.hpp "plotting/"
# Transitive: report/data may include db/, but then every analysis that includes that header
# (compare.hpp -> observations.hpp -> instances.hpp) and the scaling plan (plan.hpp ->
# instances.hpp) reach it; the message shows the chain.
plant report/data/instances.hpp db/database.hpp "report/analysis/compare.hpp -> report/data/observations.hpp -> report/data/instances.hpp -> db/database.hpp"
plant report/data/run_set.hpp db/database.hpp "scaling/plan.hpp -> report/data/run_set.hpp -> db/database.hpp"
exit "$failures"
