#!/usr/bin/env bash
# README command (a): install what the product needs, build the product, run the quickstart experiment end to end, and leave the
# database, the table and the figure in ./results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --product   # only what it runs: no test tools, PyTorch, Slurm, TeX
bash scripts/build.sh --product          # scalebench and scalebench-train, not the test suite
build_dir="${BUILD_DIR:-build}"
results="${RESULTS_DIR:-results}"
db="$results/scalebench.db"
mkdir -p "$results"

"$build_dir/scalebench" run experiments/quickstart.json --db "$db"
"$build_dir/scalebench" report --db "$db" --experiment quickstart --output "$results/quickstart-table.md"
"$build_dir/scalebench" report --db "$db" --experiment quickstart --format csv --output "$results/quickstart-table.csv"
"$build_dir/scalebench" plot --db "$db" --experiment quickstart --output "$results/quickstart-scaling"
"$build_dir/scalebench" paper --db "$db" --experiment quickstart --output "$results/quickstart-paper"
echo
cat "$results/quickstart-table.md"
echo
echo "database: $db   (scalebench query --db $db \"SELECT * FROM epoch_times LIMIT 5\")"
echo "table:    $results/quickstart-table.md, $results/quickstart-table.csv"
echo "figure:   $results/quickstart-scaling.png, $results/quickstart-scaling.svg"
echo "paper:    $results/quickstart-paper/ (main.tex for lualatex, index.html)"
