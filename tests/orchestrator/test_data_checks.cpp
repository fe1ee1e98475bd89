// Issue 23, item 6: data that would give wrong answers is refused or named. Factor names that
// differ only in case (one column of the epoch_levels view) are refused when the file is read;
// an epoch started twice by one rank makes the run incomplete instead of stretching the epoch.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "orchestrator/experiment.hpp"
#include "orchestrator/run_analysis.hpp"
#include "orchestrator/runner.hpp"
#include "runner_support.hpp"
#include "stamped_lines.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

std::string parse_error(const std::string& json) {
  try {
    parse_experiment(json, "exp.json");
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "<no error>";
}

constexpr std::int64_t kStart = 1'000'000'000;

StampedLine at(double seconds, std::string text) {
  return test::stamped(kStart, seconds, std::move(text), Stream::Stdout);
}

}  // namespace

TEST_CASE("factor names that differ only in case are refused, naming both and where they are") {
  const auto error = parse_error(R"({
    "name": "t", "trainer": {"epochs": 1},
    "factors": {"Model": ["a", "b"], "model": ["c", "d"]},
    "conditions": [{"name": "single", "launcher": "single"}]
  })");
  CHECK(error.find("exp.json: field \"factors.") == 0);
  CHECK(error.find("\"Model\"") != std::string::npos);
  CHECK(error.find("\"model\"") != std::string::npos);
  CHECK(error.find("factors.Model") != std::string::npos);
  CHECK(error.find("factors.model") != std::string::npos);
  CHECK(error.find("in more than case") != std::string::npos);
  // Names that differ in more than case are fine.
  CHECK(parse_error(R"({
    "name": "t", "trainer": {"epochs": 1},
    "factors": {"model": ["a", "b"], "model2": ["c", "d"]},
    "conditions": [{"name": "single", "launcher": "single"}]
  })") == "<no error>");
}

TEST_CASE("an epoch started twice by one rank is a problem, not an epoch spanning both copies") {
  const std::vector<StampedLine> repeated = {
      at(0.1, "Epoch 1/3"),
      at(1.0, "Epoch 2/3"),
      at(2.0, "Epoch 2/3"),
      at(3.0, "Epoch 3/3"),
      at(4.0, "Training done: epochs=3"),
  };
  const auto analysis = analyze_run(repeated, kStart);
  REQUIRE(analysis.problems.size() == 1);
  CHECK(analysis.problems[0] == "line 2: `Epoch 2/3` started again (the same epoch started twice)");

  // Tagged: named by rank; another rank's start of the same epoch is no problem.
  const std::vector<StampedLine> tagged = {
      at(0.1, "[1,0]<stdout>:Epoch 1/2"), at(0.2, "[1,1]<stdout>:Epoch 1/2"),
      at(1.0, "[1,0]<stdout>:Epoch 2/2"), at(1.1, "[1,1]<stdout>:Epoch 2/2"),
      at(1.5, "[1,1]<stdout>:Epoch 2/2"), at(2.0, "[1,0]<stdout>:Training done: epochs=2"),
  };
  const auto by_rank = analyze_run(tagged, kStart);
  REQUIRE(by_rank.problems.size() == 1);
  CHECK(by_rank.problems[0] ==
        "line 4: `Epoch 2/2` started again by rank 1 (the same epoch started twice)");

  // Untagged lines of np ranks: np starts of one epoch are every rank's, one more is a problem.
  const std::vector<StampedLine> two_ranks = {
      at(0.1, "Epoch 1/2"),
      at(0.2, "Epoch 1/2"),
      at(1.0, "Epoch 2/2"),
      at(1.1, "Epoch 2/2"),
      at(2.0, "Training done: epochs=2"),
  };
  RunExpectations np2;
  np2.np = 2;
  CHECK(analyze_run(two_ranks, kStart, {}, np2).problems.empty());
  auto three = two_ranks;
  three.insert(three.begin() + 4, at(1.5, "Epoch 2/2"));
  CHECK(analyze_run(three, kStart, {}, np2).problems.size() == 1);
}

TEST_CASE("a run that starts an epoch twice is stored incomplete, the problem its error") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(
      R"({"name":"twice","conditions":[{"name":"single","launcher":"single"}]})", "twice.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  FakeExecutor executor([](const LaunchSpec&) {
    FakeProcess process;
    process.lines = {{0.1, Stream::Stdout, "Epoch 1/3"},
                     {0.5, Stream::Stdout, "Epoch 2/3"},
                     {0.9, Stream::Stdout, "Epoch 2/3"},
                     {1.3, Stream::Stdout, "Epoch 3/3"},
                     {1.7, Stream::Stdout, "Training done: epochs=3"}};
    process.duration_seconds = 1.8;
    return process;
  });
  run_experiment(experiment, plans, executor, database, test::context_for(experiment));
  const auto runs = database.runs("twice");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].status == db::RunStatus::Incomplete);
  CHECK(runs[0].error.find("`Epoch 2/3` started again") != std::string::npos);
}
