// scaling/plan_input.hpp on in-memory RunSets (issue 36): the step per run from its epochs and
// header, one series and one batch, and the allreduce rows of one transport.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "report/data/run_set.hpp"
#include "report/error.hpp"
#include "scaling/plan_input.hpp"

using namespace scalebench;

namespace {

report::Run training_run(std::int64_t id, int np, std::vector<double> epochs,
                         const std::string& header =
                             "scalebench-train model=m parameters=1000 "
                             "batch_size=10 fusion_mb=2") {
  report::Run run;
  run.id = id;
  run.experiment = "e";
  run.condition = "hvd";
  run.launcher = "mpirun";
  run.np = np;
  run.train_images = 1000;
  int number = 0;
  for (const double s : epochs) run.epochs.emplace_back(++number, s);
  run.header = report::TrainerHeader::parse(header);
  return run;
}

}  // namespace

TEST_CASE("load_training: a run's step is its mean epoch over its steps, sizes from its header") {
  report::RunSet set;
  set.experiment = "e";
  set.runs = {training_run(1, 1, {10, 12}), training_run(2, 2, {6, 6})};
  set.warmup_epochs = 1;
  set.warmup_origin = "--skip-epochs";
  const auto data = scaling::load_training(set, {});
  REQUIRE(data.runs.size() == 2);
  CHECK(data.runs[0].step_seconds == doctest::Approx(11.0 / 100));  // 1000 images / (1 x 10)
  CHECK(data.runs[1].step_seconds == doctest::Approx(6.0 / 50));
  CHECK(data.parameters == 1000);
  CHECK(data.fusion_bytes == 2 * scaling::kMiB);
  CHECK(data.batch == 10);
  CHECK(data.skip_epochs == 1);
  CHECK(data.skip_origin == "--skip-epochs");
  CHECK(data.series == "hvd");

  // An allreduce benchmark run is not a training run, even with epochs.
  set.allreduce_runs = {{2, "hvd", "mpirun", 2, {}, {{"mpi", 1024, 5.0, 1.0, 0}}}};
  CHECK(scaling::load_training(set, {}).runs.size() == 1);
  set.allreduce_runs.clear();

  auto mixed = set;
  mixed.runs[1].header =
      report::TrainerHeader::parse("scalebench-train parameters=1000 batch_size=20");
  CHECK_THROWS_WITH_AS(scaling::load_training(mixed, {}),
                       doctest::Contains("different batch sizes (10 and 20)"), report::ReportError);
  auto headless = set;
  headless.runs[0].header.reset();
  CHECK_THROWS_WITH_AS(scaling::load_training(headless, {}),
                       doctest::Contains("run 1 (hvd np=1) printed no scalebench-train header"),
                       report::ReportError);
  scaling::ScalingPlanOptions given;
  given.batch_size = 10;
  given.parameters = 5;
  CHECK(scaling::load_training(headless, given).parameters == 5);
  auto two_series = set;
  two_series.runs[1].levels = {{"link", "ib"}};
  CHECK_THROWS_WITH_AS(scaling::load_training(two_series, {}),
                       doctest::Contains("the training runs form 2 series"), report::ReportError);
  report::RunSet empty;
  empty.experiment = "e";
  empty.runs_without_epochs = 2;
  CHECK_THROWS_WITH_AS(scaling::load_training(empty, {}),
                       doctest::Contains("no finished training run in e (runs without epochs"),
                       report::ReportError);
}

TEST_CASE("load_allreduce: correct rows of one transport, within np and the size window") {
  report::RunSet set;
  set.experiment = "e";
  set.allreduce_runs = {
      {10, "ar", "mpirun", 2, {}, {{"mpi", 1 << 20, 100, 10, 0}, {"mpi", 1 << 10, 5, 1, 0}}},
      {11, "ar", "mpirun", 4, {}, {{"mpi", 1 << 20, 150, 10, 3}}},  // a wrong sum: left out
      {12, "ar", "mpirun", 8, {}, {{"mpi", 1 << 20, 200, 10, 0}}}};
  const auto all = scaling::load_allreduce(set, {}, std::nullopt, 0);
  CHECK(all.transport == "mpi");
  REQUIRE(all.runs.size() == 2);
  CHECK(all.runs[0].ranks == 2);
  CHECK(all.runs[0].rows.size() == 2);
  CHECK(all.runs[0].rows[0].seconds == doctest::Approx(100e-6));
  CHECK(scaling::load_allreduce(set, {}, 4, 0).runs.size() == 1);  // np <= 4
  scaling::ScalingPlanOptions window;
  window.allreduce_window = 4;
  const auto near = scaling::load_allreduce(set, window, std::nullopt, 1 << 20);
  CHECK(near.runs[0].rows.size() == 1);  // 1 KiB is not within 4x of 1 MiB
  set.allreduce_runs.push_back({13, "ar", "mpirun", 2, {}, {{"nccl", 1 << 20, 50, 20, 0}}});
  CHECK_THROWS_WITH_AS(scaling::load_allreduce(set, {}, std::nullopt, 0),
                       doctest::Contains("several transports (mpi, nccl)"), report::ReportError);
  scaling::ScalingPlanOptions nccl;
  nccl.transport = "nccl";
  CHECK(scaling::load_allreduce(set, nccl, std::nullopt, 0).runs.size() == 1);
}
