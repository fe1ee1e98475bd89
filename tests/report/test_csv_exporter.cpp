#include <doctest/doctest.h>

#include "report/analysis/report.hpp"
#include "report/export/exporters.hpp"
#include "sample_table.hpp"

using namespace scalebench;

TEST_CASE("CSV: one header line, one line per row, full precision, absent values empty") {
  const std::string expected =
      "label,condition,launcher,np,runs,epochs,mean_epoch_seconds,sd_epoch_seconds,"
      "tukey_p_vs_base,images_per_second,speedup_vs_base,scaling_efficiency,is_base,"
      "test_accuracy,unit,mean_ci_lower,mean_ci_upper,speedup_ci_lower,speedup_ci_upper,"
      "letters,images_ci_lower,images_ci_upper,efficiency_ci_lower,efficiency_ci_upper,"
      "display_label\n"
      "single,single,single,1,1,3,29.77,4.12,3.2e-12,183.94,1.25,1.25,false,0.8712,run,,,,,"
      "a,,,,,Single process\n"
      "mpirun np=1,mpirun,mpirun,1,3,9,37.13,4.32,,147.48,1,1,true,,run,,,,,,,,,,\"MPI, np = 1\"\n"
      "mpirun "
      "np=2,mpirun,mpirun,2,3,9,21.84,1.65,0.43,250.7,1.7,0.85,false,,run,20.1,23.58,1.5,1.9,"
      ",240,260,0.8,0.9,\"MPI, np = 2\"\n"
      "mpirun np=8,mpirun,mpirun,8,1,1,0.0512,,2.766e-258,,725.2,,false,,run,,,,,,,,,,"
      "\"MPI, np = 8\"\n";
  auto table = test::sample_table();
  table.rows[0].mean_test_accuracy = 0.8712;
  table.rows[0].letters = "a";
  table.rows[2].images_ci_lower = 240;
  table.rows[2].images_ci_upper = 260;
  table.rows[2].efficiency_ci_lower = 0.8;
  table.rows[2].efficiency_ci_upper = 0.9;
  table.labels.text = {{"single", "Single process"}, {"mpirun", "MPI"}};
  CHECK(report::make_exporter("csv")->render(table) == expected);
}

TEST_CASE("CSV: RFC 4180 quoting of commas, quotes and line breaks") {
  auto table = test::sample_table();
  table.rows.resize(1);
  table.rows[0].label = "a,b";
  table.rows[0].condition = "say \"hi\"";
  table.rows[0].launcher = "two\nlines";
  const std::string text = report::make_exporter("csv")->render(table);
  CHECK(text.substr(text.find('\n') + 1) ==
        "\"a,b\",\"say "
        "\"\"hi\"\"\",\"two\nlines\",1,1,3,29.77,4.12,3.2e-12,183.94,1.25,1.25,false,,run,,,,,,,,,,"
        "\"a,b\"\n");
}
