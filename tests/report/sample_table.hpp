// A small hand-built report table shared by the exporter and figure tests, so their expected text
// does not depend on the statistics' numerics.
#pragma once

#include "report/analysis/report.hpp"

namespace scalebench::test {

inline report::ReportTable sample_table() {
  using report::ReportRow;
  report::ReportTable table;
  table.experiment = "mnist-cnn";
  table.base_label = "mpirun np=1";
  table.rows = {
      ReportRow{"single", "single", "single", 1, 1, 3, 29.77, 4.12, 3.2e-12, 183.94, 1.25, 1.25,
                false},
      ReportRow{"mpirun np=1", "mpirun", "mpirun", 1, 3, 9, 37.13, 4.32, std::nullopt, 147.48, 1.0,
                1.0, true},
      ReportRow{"mpirun np=2", "mpirun", "mpirun", 2, 3, 9, 21.84, 1.65, 0.43, 250.7, 1.7, 0.85,
                false},
      ReportRow{"mpirun np=8", "mpirun", "mpirun", 8, 1, 1, 0.0512, std::nullopt, 2.766e-258,
                std::nullopt, 725.2, std::nullopt, false},
  };
  table.rows[2].mean_ci_lower = 20.1;
  table.rows[2].mean_ci_upper = 23.58;
  table.rows[2].speedup_ci_lower = 1.5;
  table.rows[2].speedup_ci_upper = 1.9;
  table.anova = report::AnovaSummary{1119.95, 3, 18, 2.766e-258};
  table.notes = {"Unit of analysis: one run.",
                 "No standard deviation for groups with one run: "
                 "mpirun np=8."};
  return table;
}

}  // namespace scalebench::test
