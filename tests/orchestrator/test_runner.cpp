// The matrix runner end to end through the fake executor and a real database file: milliseconds.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "orchestrator/runner.hpp"
#include "runner_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

const char* kExperiment = R"({
  "name": "fake",
  "repetitions": 2,
  "np": [1, 2],
  "trainer": {"epochs": 3},
  "conditions": [
    {"name": "single", "launcher": "single"},
    {"name": "mpirun", "launcher": "mpirun"}
  ]
})";

int np_of(const LaunchSpec& spec) {
  if (spec.argv[0] != "mpirun") return 1;
  return std::stoi(spec.argv[2]);
}

// A trainer whose epochs take 2/np seconds, printing what scalebench-train prints.
FakeProcess scripted_trainer(const LaunchSpec& spec) {
  const int np = np_of(spec);
  const double epoch = 2.0 / np;
  const std::string tag = spec.argv[0] == "mpirun" ? "[1,0]<stdout>:" : "";
  FakeProcess process;
  double t = 0.25;
  process.lines.push_back(
      {0.1, Stream::Stdout,
       tag + fmt::format("scalebench-train model=mlp train_images=600 np={}", np)});
  for (int y = 1; y <= 3; ++y) {
    process.lines.push_back({t, Stream::Stdout, tag + fmt::format("Epoch {}/3", y)});
    if (np == 2)
      process.lines.push_back({t + 0.001, Stream::Stdout, "[1,1]<stdout>:rank one says hi"});
    t += epoch;
    process.lines.push_back(
        {t - 0.001, Stream::Stdout,
         tag + fmt::format("5/5 - loss: 0.5 - accuracy: 0.9 - epoch_seconds: {}", epoch - 0.001)});
  }
  process.lines.push_back({t, Stream::Stdout, tag + "Training done: epochs=3"});
  process.duration_seconds = t + 0.05;
  return process;
}

using test::context_for;

}  // namespace

TEST_CASE("the whole matrix runs through the fake executor into the database") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(kExperiment, "fake.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  FakeExecutor executor(scripted_trainer);

  const auto outcome =
      run_experiment(experiment, plans, executor, database, context_for(experiment));
  CHECK(outcome.runs == 6);
  CHECK(outcome.ok == 6);
  CHECK(executor.launched().size() == 6);

  const auto runs = database.runs("fake");
  REQUIRE(runs.size() == 6);
  for (const auto& run : runs) {
    CHECK(run.status == db::RunStatus::Ok);
    CHECK(run.exit_code == 0);
    CHECK(run.train_images == 600);
    const double epoch = 2.0 / run.np;
    CHECK(*run.images_per_second == doctest::Approx(600 / epoch));
    CHECK(*run.startup_seconds == doctest::Approx(0.25));
    const auto epochs = database.epochs(run.id);
    REQUIRE(epochs.size() == 3);
    for (const auto& e : epochs) {
      CHECK(*e.duration_seconds == doctest::Approx(epoch));
      CHECK(std::abs(*e.duration_seconds - *e.trainer_seconds) == doctest::Approx(0.001));
    }
  }
  CHECK(runs[2].condition == "mpirun");
  CHECK(runs[2].np == 2);
  CHECK(runs[2].command_line == "mpirun -np 2 --tag-output scalebench-train --epochs 3");
  const auto lines = database.lines(runs[2].id);
  CHECK(lines.size() == 11);
  CHECK(lines[2].rank == 1);
  CHECK(lines[2].text == "rank one says hi");
  CHECK(database.epoch_samples("fake").size() == 18);
}

TEST_CASE("failed, crashed and hanging runs are stored with their status and lines") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(
      R"({"name":"bad","repetitions":4,"conditions":[{"name":"single","launcher":"single"}]})",
      "bad.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  int call = 0;
  FakeExecutor executor([&](const LaunchSpec&) {
    FakeProcess process;
    switch (call++) {
      case 0:  // crashes with an error
        process.lines = {{0.1, Stream::Stdout, "Epoch 1/2"},
                         {0.5, Stream::Stderr, "out of memory"}};
        process.exit_code = 1;
        break;
      case 1:  // hangs and is stopped
        process.lines = {{0.1, Stream::Stdout, "Epoch 1/2"}};
        process.exit_code.reset();
        process.signal = 15;
        process.timed_out = true;
        break;
      case 2:  // exits 0 but never finishes its epochs
        process.lines = {{0.1, Stream::Stdout, "Epoch 1/2"}, {0.2, Stream::Stdout, "Epoch 2/2"}};
        break;
      default:
        process.launch_error = "program not found: scalebench-train";
    }
    return process;
  });
  const auto outcome =
      run_experiment(experiment, plans, executor, database, context_for(experiment));
  CHECK(outcome.runs == 4);
  CHECK(outcome.ok == 0);
  const auto runs = database.runs("bad");
  REQUIRE(runs.size() == 4);
  CHECK(runs[0].status == db::RunStatus::Failed);
  CHECK(runs[0].error == "exit code 1 (stderr: out of memory)");
  CHECK(runs[1].status == db::RunStatus::Timeout);
  CHECK(runs[1].signal == 15);
  CHECK(runs[2].status == db::RunStatus::Incomplete);
  CHECK(runs[2].error ==
        "the last epoch has no end: no `Training done:` line, no end-of-epoch line and no later "
        "line after `Epoch 2/2`");
  CHECK(runs[3].status == db::RunStatus::Failed);
  CHECK(runs[3].error == "program not found: scalebench-train");
  CHECK(database.lines(runs[0].id).size() == 2);
  CHECK(database.epoch_samples("bad").empty());  // only ok runs feed the statistics
}

TEST_CASE("an allreduce benchmark experiment stores its rows through the fake executor") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(R"({
    "name": "ar",
    "np": [1, 2],
    "trainer": {"benchmark": "allreduce", "min-bytes": "8", "max-bytes": "32", "step-factor": 4},
    "conditions": [{"name": "mpi", "launcher": "mpirun"}]
  })",
                                           "ar.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  // What scalebench-train --benchmark allreduce prints: two sizes, busbw = algbw · 2(np − 1)/np.
  FakeExecutor executor([](const LaunchSpec& spec) {
    const int np = np_of(spec);
    const std::string tag = "[1,0]<stdout>:";
    FakeProcess process;
    process.lines = {
        {0.30, Stream::Stdout,
         tag + fmt::format("# scalebench-train benchmark=allreduce transport=mpi np={} "
                           "backend=cpu type=float op=sum",
                           np)},
        {0.31, Stream::Stdout, tag + "#"},
        {0.32, Stream::Stdout, tag + "#        size         count    type   redop        time"},
        {0.40, Stream::Stdout,
         tag + fmt::format("            8             2   float     sum       0.800    0.0100"
                           "    {:.4f}       0",
                           np == 1 ? 0.0 : 0.01)},
        {0.50, Stream::Stdout,
         tag + fmt::format("           32             8   float     sum       1.600    0.0200"
                           "    {:.4f}       0",
                           np == 1 ? 0.0 : 0.02)},
        {0.51, Stream::Stdout, tag + "# Out of bounds values : 0 OK"},
        {0.52, Stream::Stdout, tag + "# Avg bus bandwidth    : 0.0150"},
    };
    return process;
  });

  const auto outcome =
      run_experiment(experiment, plans, executor, database, context_for(experiment));
  CHECK(outcome.runs == 2);
  CHECK(outcome.ok == 2);  // no Epoch lines, and still ok
  const auto runs = database.runs("ar");
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].command_line ==
        "mpirun -np 2 --tag-output scalebench-train --benchmark allreduce --max-bytes 32 "
        "--min-bytes 8 --step-factor 4");
  for (const auto& run : runs) {
    CAPTURE(run.np);
    CHECK(run.status == db::RunStatus::Ok);
    CHECK(run.error.empty());
    CHECK_FALSE(run.images_per_second);
    CHECK(database.epochs(run.id).empty());
    CHECK(database.lines(run.id).size() == 7);
    const auto rows = database.allreduce_results(run.id);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].seq == 3);
    CHECK(rows[0].transport == "mpi");
    CHECK(rows[0].bytes == 8);
    CHECK(rows[1].bytes == 32);
    CHECK(rows[1].time_us == 1.6);
    CHECK(rows[1].busbw_gbs == (run.np == 1 ? 0.0 : 0.02));
  }
  const auto table = database.query_read_only(
      "SELECT np, bytes, busbw_gbs FROM allreduce_times WHERE experiment = 'ar' AND "
      "status = 'ok' ORDER BY np, bytes");
  REQUIRE(table.rows.size() == 4);
  CHECK(table.rows[3] == std::vector<std::optional<std::string>>{"2", "32", "0.02"});
  CHECK(database.epoch_samples("ar").empty());
}

TEST_CASE("a factorial matrix stores every run's levels, and --resume runs only its cells not ok") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(R"({
    "name": "study", "repetitions": 2, "np": [1, 2], "trainer": {"epochs": 3},
    "order": "randomized", "seed": 5,
    "factors": {"model": ["vgg16", "inception_v3"]},
    "exclude": [{"condition": "single", "model": "inception_v3"}],
    "conditions": [{"name": "single", "launcher": "single"}, {"name": "mpirun", "launcher": "mpirun"}]
  })",
                                           "study.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  REQUIRE(plans.size() == 10);  // (1 + 2 + 2) cells x 2 repetitions
  const auto is_vgg = [](const LaunchSpec& spec) {
    return std::find(spec.argv.begin(), spec.argv.end(), "vgg16") != spec.argv.end();
  };
  // inception_v3 fails the first time round.
  FakeExecutor first_executor([&](const LaunchSpec& spec) {
    auto process = scripted_trainer(spec);
    if (!is_vgg(spec)) process.exit_code = 1;
    return process;
  });
  auto context = context_for(experiment);
  context.factors_json = factors_json(experiment);
  const auto first = run_experiment(experiment, plans, first_executor, database, context);
  CHECK(first.cells == 10);
  CHECK(first.cells_ok == 6);

  const auto runs = database.runs_of_instances({first.experiment_id});
  REQUIRE(runs.size() == 10);
  std::map<std::string, int> by_level;
  for (const auto& run : runs) {
    REQUIRE(run.factors.size() == 1);
    CHECK(run.factors[0].first == "model");
    ++by_level[run.factors[0].second];
    CHECK((run.factors[0].second == "vgg16") == (run.status == db::RunStatus::Ok));
  }
  CHECK(by_level == std::map<std::string, int>{{"inception_v3", 4}, {"vgg16", 6}});
  CHECK(database.experiment(first.experiment_id)->factors_json ==
        R"([{"levels":["vgg16","inception_v3"],"name":"model"}])");

  // The cell key includes the levels: only the four inception_v3 cells are pending.
  FakeExecutor fixed([](const LaunchSpec& spec) { return scripted_trainer(spec); });
  auto instance = resume_instance(database, context, plans);
  CHECK(instance.pending.size() == 4);
  for (const auto& plan : instance.pending) CHECK(plan.levels[0].second == "inception_v3");
  const auto second = run_instance(experiment, instance, fixed, database);
  CHECK(second.cells_ok == 10);
  CHECK(fixed.launched().size() == 4);
}
