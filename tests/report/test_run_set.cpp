// report/data/run_set.hpp and the analyses as functions of an in-memory RunSet (issue 36): no
// database anywhere in this file.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "report/analysis/report_assembly.hpp"
#include "report/data/observations.hpp"
#include "report/data/run_set.hpp"
#include "report/error.hpp"

using namespace scalebench;
using report::Run;
using report::RunFilter;
using report::RunSet;

namespace {

Run make_run(std::int64_t id, std::string condition, std::string launcher, int np,
             std::vector<double> seconds, std::string model = "vgg16") {
  Run run;
  run.id = id;
  run.experiment = "e";
  run.condition = std::move(condition);
  run.launcher = std::move(launcher);
  run.np = np;
  run.levels = {{"model", std::move(model)}};
  run.train_images = 1200;
  int number = 0;
  for (const double s : seconds) run.epochs.emplace_back(++number, s);
  return run;
}

// Two conditions, two models, np 1 and 2: six runs.
RunSet study() {
  RunSet set;
  set.experiment = "e";
  set.instances = {7};
  set.condition_order = {"single", "hvd"};
  set.level_order = {{"model", {"vgg16", "resnet"}}};
  set.runs = {make_run(1, "hvd", "mpirun", 2, {6, 6}),
              make_run(2, "single", "single", 1, {10, 12}),
              make_run(3, "hvd", "mpirun", 1, {11, 11}),
              make_run(4, "hvd", "mpirun", 1, {5, 5}, "resnet"),
              make_run(5, "hvd", "mpirun", 2, {3, 3}, "resnet"),
              make_run(6, "hvd", "mpirun", 2, {7, 7})};
  set.notes = {"Measured in instance 7."};
  set.failures = {"hvd model=vgg16 np=4: 0 of 1 runs ok (1 failed); not in the table"};
  set.provenance = {{"host", "n1"}, {"mpi", "Open MPI 4.1.4"}};
  return set;
}

}  // namespace

TEST_CASE("a run's epoch time and images/s are computed once, on its epochs") {
  const auto run = make_run(1, "hvd", "mpirun", 2, {2, 4, 6});
  CHECK(run.mean_epoch_seconds() == 4.0);
  CHECK(*run.images_per_second() == doctest::Approx(1200.0 * 3 / 12));
  Run no_images = run;
  no_images.train_images.reset();
  CHECK_FALSE(no_images.images_per_second());
  Run empty = run;
  empty.epochs.clear();
  CHECK(empty.mean_epoch_seconds() == 0.0);
  CHECK_FALSE(empty.images_per_second());
  Run zero = make_run(2, "hvd", "mpirun", 2, {0, 0});
  CHECK_FALSE(zero.images_per_second());  // no time measured: no rate, not infinity
}

TEST_CASE("a run's level of built-in and file factors, and its group label") {
  const auto run = make_run(1, "hvd", "mpirun", 2, {1});
  CHECK(run.level("condition") == "hvd");
  CHECK(run.level("launcher") == "mpirun");
  CHECK(run.level("np") == "2");
  CHECK(run.level("model") == "vgg16");
  CHECK(run.level("group") == "hvd model=vgg16 np=2");
  CHECK_FALSE(run.level("batch"));
  CHECK(report::group_label("single", "single", 1) == "single");
  CHECK(report::group_label("hvd", "mpirun", 4, {{"a", "1"}, {"b", "x"}}) == "hvd a=1 b=x np=4");
}

TEST_CASE("the trainer header: words with '=' in order, numbers only when the whole word is one") {
  const auto header = report::TrainerHeader::parse(
      "scalebench-train model=resnet50 parameters=25557032  batch_size=64 fusion_mb=2.5e1 "
      "overlap=on x=12abc flag");
  CHECK(header.fields.size() == 6);
  CHECK(header.value("model") == "resnet50");
  CHECK(header.number("parameters") == 25557032.0);
  CHECK(header.number("batch_size") == 64.0);
  CHECK(header.number("fusion_mb") == 25.0);
  CHECK(header.value("overlap") == "on");
  CHECK_FALSE(header.number("overlap"));
  CHECK_FALSE(header.number("x"));  // a number followed by text is no number
  CHECK_FALSE(header.value("flag"));
  CHECK(report::TrainerHeader::parse("").fields.empty());
}

TEST_CASE("a set's factors and each factor's level order") {
  const auto set = study();
  CHECK(set.factors() == std::vector<std::string>{"condition", "launcher", "np", "model"});
  CHECK(set.level_order_of("condition") == std::vector<std::string>{"single", "hvd"});
  CHECK(set.level_order_of("model") == std::vector<std::string>{"vgg16", "resnet"});
  CHECK(set.level_order_of("np") == std::vector<std::string>{"1", "2"});
  CHECK(set.level_order_of("launcher").empty());  // order of appearance
}

TEST_CASE("RunFilter: one parse, one apply, errors that name what the set has") {
  CHECK_THROWS_WITH_AS(RunFilter::parse({"vgg16"}),
                       "--only vgg16: expected FACTOR=LEVEL, e.g. condition=mpirun",
                       report::InputError);
  CHECK_THROWS_AS(RunFilter::parse({"=x"}), report::InputError);
  const auto filter = RunFilter::parse({"model=vgg16", "np=2"}, std::string("hvd"));
  CHECK(filter.describe() == "condition=hvd, model=vgg16, np=2");

  auto set = study();
  CHECK(report::apply_filter(set, filter) == 4);
  REQUIRE(set.runs.size() == 2);
  CHECK(set.runs[0].id == 1);
  CHECK(set.runs[1].id == 6);
  CHECK(set.filter.describe() == filter.describe());

  auto other = study();
  CHECK_THROWS_WITH_AS(report::apply_filter(other, RunFilter::parse({"modle=vgg16"})),
                       "--only modle=vgg16: experiment \"e\" has no factor modle; its factors: "
                       "condition, launcher, np, model",
                       report::InputError);
  CHECK_THROWS_WITH_AS(report::apply_filter(other, RunFilter::parse({"model=vgg"})),
                       "--only model=vgg: model has no level vgg; its levels: vgg16, resnet",
                       report::InputError);
  CHECK_THROWS_WITH_AS(report::apply_filter(other, RunFilter::parse({}, std::string("hdv"))),
                       "--condition hdv: no run of e has it (conditions: hvd, single)",
                       report::InputError);
  CHECK(other.runs.size() == 6);  // a refused filter removes nothing
}

TEST_CASE("the warm-up rule drops epochs 1..N of runs with more than N") {
  std::vector<Run> runs = {make_run(1, "a", "single", 1, {9, 1, 1}),
                           make_run(2, "a", "single", 1, {9})};
  CHECK(report::drop_warmup_epochs(runs, 1) == 1);
  CHECK(runs[0].epochs.size() == 2);
  CHECK(runs[0].mean_epoch_seconds() == 1.0);
  CHECK(runs[1].epochs.size() == 1);  // too short: kept whole
  CHECK(report::drop_warmup_epochs(runs, 0) == 0);
}

TEST_CASE("observations of a RunSet: a mean per run, each epoch, or the log of the rate") {
  auto set = study();
  const auto per_run = report::observations_from_runs(set, {"np"}, "run");
  CHECK(per_run.values == std::vector<double>{6, 11, 11, 5, 3, 7});
  CHECK(per_run.levels[0] == std::vector<std::string>{"2", "1", "1", "1", "2", "2"});
  CHECK(per_run.level_order[0] == std::vector<std::string>{"1", "2"});
  // The failures and the pooled conditions are said.
  CHECK(per_run.warnings.front() == set.failures.front());
  CHECK(per_run.warnings.back().find("the runs of conditions hvd, single are pooled") == 0);

  const auto epochs = report::observations_from_runs(set, {"condition"}, "epoch");
  CHECK(epochs.values.size() == 12);
  CHECK(epochs.runs.front() == 1);
  CHECK(epochs.values[2] == 10.0);  // run 2's first epoch
  CHECK(epochs.warnings.back().find("pseudo-replication") != std::string::npos);

  const auto rates = report::observations_from_runs(set, {"group"}, "run", "log_images_per_second");
  CHECK(rates.values[0] == doctest::Approx(std::log(1200.0 / 6)));
  set.runs[0].train_images.reset();
  CHECK_THROWS_WITH_AS(
      report::observations_from_runs(set, {"group"}, "run", "log_images_per_second"),
      doctest::Contains("run 1 has no images per epoch"), report::InputError);
  CHECK_THROWS_WITH_AS(report::observations_from_runs(set, {"batch"}, "run"),
                       doctest::Contains("--factor batch: experiment \"e\" has no such factor"),
                       report::InputError);
  CHECK_THROWS_WITH_AS(report::observations_from_runs(set, {"np"}, "runs"),
                       "--unit runs: expected one of run, nested, epoch", report::InputError);
}

TEST_CASE("the report of a RunSet: its notes around the table's, its provenance, its order") {
  const auto set = study();
  const auto table = report::report_of(set);
  REQUIRE(table.rows.size() == 5);
  CHECK(table.rows[0].label == "single model=vgg16");  // the file's order: single first
  CHECK(table.rows[1].label == "hvd model=vgg16 np=1");
  CHECK(table.rows[2].label == "hvd model=vgg16 np=2");
  CHECK(table.rows[2].runs == 2);
  CHECK(table.rows[2].mean_epoch_seconds == 6.5);  // the mean of the runs' means 6 and 7
  CHECK(table.notes.front() == "Measured in instance 7.");
  CHECK(table.notes.back() == set.failures.front());
  CHECK(table.provenance == set.provenance);

  const auto by_model = report::factor_report_of(set, "model", std::string("hvd np=1"));
  CHECK(by_model.levels == std::vector<std::string>{"vgg16", "resnet"});
  REQUIRE(by_model.blocks.size() == 2);
  CHECK(by_model.blocks[1].rows.size() == 2);  // resnet: hvd np=1 and np=2
  CHECK(*by_model.blocks[1].rows[1].speedup_vs_base == doctest::Approx(5.0 / 3));
}
