#include <doctest/doctest.h>

#include <limits>

#include "report/analysis/report.hpp"
#include "report/export/exporters.hpp"
#include "sample_table.hpp"

using namespace scalebench;

TEST_CASE("Markdown: the paper's Table 1 layout, honest p-values, ANOVA row and notes") {
  const std::string expected =
      "## Experiment mnist-cnn\n"
      "\n"
      "- Unit of analysis: run (22 epochs from 8 runs in 4 groups)\n"
      "- Base group: mpirun np=1\n"
      "\n"
      "| Condition | Avg. epoch time (s) [95% CI] | SD of run means (s) | Tukey vs mpirun np=1 | "
      "Images/s [95% CI] | Speed-up [95% CI] | Efficiency [95% CI] |\n"
      "| :--- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
      "| single | 29.77 | 4.12 | p=3.20e-12 | 183.94 | 1.25 | 125.0% |\n"
      "| mpirun np=1 | 37.13 | 4.32 | N.A. | 147.48 | 1.00 | 100.0% |\n"
      "| mpirun np=2 | 21.84 [20.10, 23.58] | 1.65 | p=0.43 | 250.70 | 1.70 [1.50, 1.90] | 85.0% "
      "|\n"
      "| mpirun np=8 | 0.0512 | N.A. | p=2.77e-258 | N.A. | 725.20 | N.A. |\n"
      "| ANOVA | F=1119.95, d.f.=(3, 18), p=2.77e-258 | | | | | |\n"
      "\n"
      "Notes:\n"
      "\n"
      "- Unit of analysis: one run.\n"
      "- No standard deviation for groups with one run: mpirun np=8.\n";
  CHECK(report::make_exporter("markdown")->render(test::sample_table()) == expected);
}

TEST_CASE("Markdown: no ANOVA row without an ANOVA, pipes in labels escaped, infinite F") {
  auto table = test::sample_table();
  table.rows.resize(1);
  table.rows[0].label = "a|b";
  table.anova.reset();
  table.notes.clear();
  const std::string text = report::make_exporter("markdown")->render(table);
  CHECK(text.find("| a\\|b | 29.77 |") != std::string::npos);
  CHECK(text.find("ANOVA") == std::string::npos);
  CHECK(text.find("Notes") == std::string::npos);

  table.anova = report::AnovaSummary{std::numeric_limits<double>::infinity(), 1, 4, 0.0};
  CHECK(report::make_exporter("markdown")
            ->render(table)
            .find("| ANOVA | F=inf, d.f.=(1, 4), p<4.94e-324 |") != std::string::npos);
}

TEST_CASE("Markdown: a provenance header block, and a test accuracy column where one is known") {
  auto table = test::sample_table();
  table.rows.resize(2);
  table.anova.reset();
  table.notes.clear();
  table.rows[0].mean_test_accuracy = 0.8712;
  table.unit = "epoch";  // the reference papers' unit: the SD column is the epochs'
  table.confidence = 0.9;
  table.provenance = {{"host", "node01"}, {"mpi", "mpirun (Open MPI) 4.1.4"}, {"hosts", "a:1|b:1"}};
  const std::string expected =
      "## Experiment mnist-cnn\n"
      "\n"
      "- Unit of analysis: epoch (12 epochs from 4 runs in 2 groups)\n"
      "- Base group: mpirun np=1\n"
      "- Provenance (table `run_provenance` per run):\n"
      "  - host: node01\n"
      "  - mpi: mpirun (Open MPI) 4.1.4\n"
      "  - hosts: a:1\\|b:1\n"
      "\n"
      "| Condition | Avg. epoch time (s) [90% CI] | Std. epoch time (s) | Tukey vs mpirun np=1 | "
      "Images/s [90% CI] | Speed-up [90% CI] | Efficiency [90% CI] | Test accuracy |\n"
      "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
      "| single | 29.77 | 4.12 | p=3.20e-12 | 183.94 | 1.25 | 125.0% | 87.1% |\n"
      "| mpirun np=1 | 37.13 | 4.32 | N.A. | 147.48 | 1.00 | 100.0% | N.A. |\n";
  CHECK(report::make_exporter("markdown")->render(table) == expected);
}
