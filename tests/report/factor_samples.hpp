// Runs of a small HorovodRunner Table 2 study, shared by the report and figure tests.
#pragma once

#include <string>
#include <vector>

#include "report/analysis/report.hpp"

namespace scalebench::test {

inline void add_model_run(std::vector<report::Run>& runs, std::int64_t run_id,
                          std::string condition, std::string launcher, int np, std::string model,
                          std::vector<double> durations) {
  report::Run run;
  run.id = run_id;
  run.experiment = "t2";
  run.condition = condition;
  run.launcher = launcher;
  run.np = np;
  run.train_images = 1000;
  run.levels = {{"model", model}};
  int epoch = 0;
  for (double d : durations) run.epochs.emplace_back(++epoch, d);
  runs.push_back(run);
}

// The launched cells form a balanced 2 x 2 design (two epochs per cell):
//   vgg16 np=1: 10, 12   vgg16 np=2: 6, 8   inception np=1: 4, 6   inception np=2: 3, 5
// Cell means 11, 7, 5, 4; grand mean 6.75; model means 9, 4.5; np means 8, 5.5.
//   SS_model = 4 (2.25^2 + 2.25^2) = 40.5, SS_np = 4 (1.25^2 + 1.25^2) = 12.5,
//   interaction residues +-0.75 in every cell: SS_int = 8 x 0.5625 = 4.5,
//   within cells: 4 x 2 x 1^2 = 8 on 4 d.f. (MS 2).
// F = 20.25, 6.25, 2.25; partial eta^2 = 40.5/48.5, 12.5/20.5, 4.5/12.5.
// Runs arrive in a shuffled order (a randomized experiment), inception first.
inline std::vector<report::Run> table2_samples() {
  std::vector<report::Run> s;
  add_model_run(s, 1, "hvd", "mpirun", 2, "inception_v3", {3, 5});
  add_model_run(s, 2, "single", "single", 1, "vgg16", {11, 11});
  add_model_run(s, 3, "hvd", "mpirun", 1, "vgg16", {10, 12});
  add_model_run(s, 4, "hvd", "mpirun", 1, "inception_v3", {4, 6});
  add_model_run(s, 5, "single", "single", 1, "inception_v3", {5, 5});
  add_model_run(s, 6, "hvd", "mpirun", 2, "vgg16", {6, 8});
  return s;
}

// The values derived above are per epoch (one run per cell): the paper's unit, set here.
inline report::ReportOptions table2_file_order() {
  report::ReportOptions options;
  options.unit = "epoch";
  options.condition_order = {"single", "hvd"};
  options.level_order = {{"model", {"vgg16", "inception_v3"}}};
  // The derivation above pools the cells' variances, as the paper's Tukey did (the single rows
  // have none, so "auto" would refuse to pool).
  options.pairwise = "tukey";
  return options;
}

}  // namespace scalebench::test
