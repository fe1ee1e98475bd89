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

// A table whose columns span magnitudes (epoch times 1.27 and 0.827, SDs 0.0213 and 0.152) and
// whose throughput is large (269 849 images/s): the per-column decimals' case (issue 37).
inline report::ReportTable decimals_table() {
  using report::ReportRow;
  report::ReportTable table;
  table.experiment = "decimals";
  table.base_label = "mpirun np=1";
  table.rows = {
      ReportRow{"mpirun np=1", "mpirun", "mpirun", 1, 3, 9, 1.27, 0.0213, std::nullopt, 269849.19,
                1.0, 1.0, true},
      ReportRow{"mpirun np=2", "mpirun", "mpirun", 2, 3, 9, 0.827, 0.152, 0.0032, 516234.4, 1.536,
                0.768, false},
  };
  table.rows[0].mean_ci_lower = 1.2;
  table.rows[0].mean_ci_upper = 1.34;
  table.rows[0].images_ci_lower = 266453.1;
  table.rows[0].images_ci_upper = 273289.4;
  table.rows[1].mean_ci_lower = 0.61;
  table.rows[1].mean_ci_upper = 1.044;
  table.rows[1].images_ci_lower = 480012.3;
  table.rows[1].images_ci_upper = 552456.7;
  table.rows[1].speedup_ci_lower = 1.2;
  table.rows[1].speedup_ci_upper = 1.9;
  table.rows[1].efficiency_ci_lower = 0.6;
  table.rows[1].efficiency_ci_upper = 0.95;
  return table;
}

}  // namespace scalebench::test
