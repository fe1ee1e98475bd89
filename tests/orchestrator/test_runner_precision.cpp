// Precision-driven repetitions end to end through the fake executor (issue 38): three cells whose
// run-to-run CVs are 0.5 %, 6 % and 25 % under min 3, max 12, precision 0.05.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/runner.hpp"
#include "precision_fixture.hpp"
#include "runner_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;
using test::kExperiment;
using test::NoisyTrainer;

namespace {

std::map<std::string, int> ok_runs_per_condition(const db::Database& database) {
  std::map<std::string, int> out;
  for (const auto& run : database.runs("precise"))
    if (run.status == db::RunStatus::Ok) ++out[run.condition];
  return out;
}

std::map<std::string, stats::StopDecision> by_condition(const ExperimentOutcome& outcome) {
  std::map<std::string, stats::StopDecision> out;
  for (const auto& [cell, decision] : outcome.decisions) out[cell.condition] = decision;
  return out;
}

}  // namespace

TEST_CASE("precision rule: a steady cell stops at min, a wild one at max, a noisy one between") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "p.db").string());
  const auto experiment = parse_experiment(kExperiment, "precise.json");
  REQUIRE(experiment.precision);
  CHECK(experiment.repetitions == 12);
  ExpandOptions expand{"scalebench-train", false};
  const auto plans = expand_matrix(experiment, expand);
  CHECK(plans.size() == 36);  // 3 cells x max 12 repetitions
  NoisyTrainer trainer;
  FakeExecutor executor([&](const LaunchSpec& spec) { return trainer(spec); });
  const auto outcome =
      run_experiment(experiment, plans, executor, database, test::context_for(experiment));
  const auto stored = ok_runs_per_condition(database);
  CHECK(stored.at("steady") == 3);
  CHECK(stored.at("wild") == 12);
  CHECK(stored.at("noisy") > 3);
  CHECK(stored.at("noisy") < 12);
  CHECK(stored.at("noisy") == 10);  // with these deviates
  const auto decisions = by_condition(outcome);
  CHECK(decisions.at("steady").reason == stats::StopReason::Precision);
  CHECK(decisions.at("noisy").reason == stats::StopReason::Precision);
  CHECK(decisions.at("wild").reason == stats::StopReason::Max);
  for (const auto& [condition, runs] : stored) CHECK(decisions.at(condition).runs == runs);
  CHECK(outcome.runs == static_cast<std::size_t>(3 + 12 + stored.at("noisy")));
  CHECK(outcome.cells == outcome.runs);  // the repetitions not needed are not cells
  CHECK(outcome.cells_ok == outcome.cells);
  CHECK(outcome.not_needed == 36 - outcome.runs);
  // The warm-up (5 s) is left out: the steady cell's mean is about 1 s.
  CHECK(decisions.at("steady").mean == doctest::Approx(1.0).epsilon(0.01));

  // Runs go in rounds: the stored runs' repetitions never go down (every cell still running
  // gets its k-th run before any gets its (k+1)-th), and each is its cell's k-th run.
  std::map<std::string, int> seen;
  int last_repetition = 0;
  for (const auto& run : database.runs("precise")) {
    CHECK(run.repetition == ++seen[run.condition]);
    CHECK(run.repetition >= last_repetition);
    last_repetition = run.repetition;
  }

  SUBCASE("the same after a crash mid-matrix and --resume") {
    for (const int crash_at : {2, 9, 14, 18}) {
      CAPTURE(crash_at);
      test::TempDir other;
      auto resumed_db = db::Database::open((other / "p.db").string());
      NoisyTrainer again;
      again.crash_at = crash_at;
      FakeExecutor first([&](const LaunchSpec& spec) { return again(spec); });
      const auto context = test::context_for(experiment);
      CHECK_THROWS(run_experiment(experiment, plans, first, resumed_db, context));
      auto instance = resume_instance(resumed_db, context, plans);
      FakeExecutor second([&](const LaunchSpec& spec) { return again(spec); });
      const auto rest = run_instance(experiment, instance, second, resumed_db);
      CHECK(ok_runs_per_condition(resumed_db) == stored);
      const auto after = by_condition(rest);
      for (const auto& [condition, decision] : decisions) {
        CHECK(after.at(condition).runs == decision.runs);
        CHECK(after.at(condition).reason == decision.reason);
      }
      CHECK(rest.cells_ok == rest.cells);
    }
  }
}

TEST_CASE("precision rule: bad repetitions are one-line errors naming the field") {
  const auto error_of = [](const std::string& repetitions, const std::string& extra = "") {
    const std::string text = R"({"name": "x", "repetitions": )" + repetitions + extra +
                             R"(, "conditions": [{"name": "a", "launcher": "single"}]})";
    try {
      parse_experiment(text, "x.json");
    } catch (const ExperimentError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(R"({"min": 1, "max": 5, "precision": 0.02})") ==
        "x.json: field \"repetitions.min\": expected a whole number of runs from 2 to 100000, "
        "got 1");
  CHECK(error_of(R"({"min": 4, "max": 3, "precision": 0.02})") ==
        "x.json: field \"repetitions.max\": expected a whole number of runs from \"min\" (4) to "
        "100000, got 3");
  CHECK(error_of(R"({"min": 3, "max": 5, "precision": 0})") ==
        "x.json: field \"repetitions.precision\": expected a relative half-width above 0 and "
        "below 1 (0.02: +/-2 % of the mean), got 0");
  CHECK(error_of(R"({"min": 3, "max": 5, "precision": 1})").find("repetitions.precision") !=
        std::string::npos);
  CHECK(error_of(R"({"min": 3, "max": 5})").find("precision") != std::string::npos);
  CHECK(error_of("5", R"(, "precision": 0.02)") ==
        "x.json: field \"precision\": expected \"repetitions\": {\"min\": 3, \"max\": 20, "
        "\"precision\": 0.02} for a precision (an integer \"repetitions\" takes none), got 0.02");
  auto integer = parse_experiment(
      R"({"name": "x", "repetitions": 5, "conditions": [{"name": "a", "launcher": "single"}]})",
      "x.json");
  CHECK_THROWS_AS(set_precision(integer, 0.02), ExperimentError);
  auto object = parse_experiment(
      R"({"name": "x", "repetitions": {"min": 3, "max": 5, "precision": 0.1}, "conditions": [{"name": "a", "launcher": "single"}]})",
      "x.json");
  const auto before = object.spec_json;
  set_precision(object, 0.02);
  CHECK(object.precision->precision == 0.02);
  CHECK(object.spec_json != before);  // another precision is another spec
  CHECK_THROWS_AS(set_precision(object, 1.5), ExperimentError);
}
