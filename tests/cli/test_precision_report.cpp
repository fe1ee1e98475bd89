// Precision-driven repetitions, from the runner to the report (issue 38): three cells whose
// run-to-run CVs are 0.5 %, 6 % and 25 % (min 3, max 12, precision 0.05) run through the fake
// executor into a database; the report's per-cell runs and stop reasons are the runner's, in
// every format, and again after a crash and --resume.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "cli/run_outcome.hpp"
#include "orchestrator/precision_fixture.hpp"
#include "orchestrator/runner.hpp"
#include "orchestrator/runner_support.hpp"
#include "report/analysis/report_assembly.hpp"
#include "report/data/load_runs.hpp"
#include "report/export/exporters.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;
using test::kExperiment;
using test::NoisyTrainer;

namespace {

std::map<std::string, const report::ReportRow*> rows_by_condition(
    const report::ReportTable& table) {
  std::map<std::string, const report::ReportRow*> out;
  for (const auto& row : table.rows) out[row.condition] = &row;
  return out;
}

// The report's rows agree with the runner's decisions: runs, reason and half-width.
void check_agrees(const report::ReportTable& table, const ExperimentOutcome& outcome) {
  const auto rows = rows_by_condition(table);
  REQUIRE(rows.size() == 3);
  for (const auto& [cell, decision] : outcome.decisions) {
    CAPTURE(cell.condition);
    const auto& row = *rows.at(cell.condition);
    CHECK(row.runs == static_cast<std::size_t>(decision.runs));
    CHECK(*row.stop_reason == stats::stop_reason_name(decision.reason));
    CHECK(*row.stop_relative_half_width == doctest::Approx(decision.relative_half_width));
  }
}

}  // namespace

TEST_CASE("precision rule: the report's per-cell runs and reasons are the runner's") {
  test::TempDir dir;
  const auto path = (dir / "p.db").string();
  const auto experiment = parse_experiment(kExperiment, "precise.json");
  const auto plans = expand_matrix(experiment, ExpandOptions{"scalebench-train", false});
  ExperimentOutcome outcome;
  {
    auto database = db::Database::open(path);
    NoisyTrainer trainer;
    FakeExecutor executor([&](const LaunchSpec& spec) { return trainer(spec); });
    outcome = run_experiment(experiment, plans, executor, database, test::context_for(experiment));
  }
  const auto database = db::Database::open(path, db::OpenMode::ReadOnly);
  const auto table =
      report::report_of(report::load_runs(database, {}), std::nullopt, "run", "auto");
  check_agrees(table, outcome);
  const auto rows = rows_by_condition(table);
  CHECK(*rows.at("steady")->stop_reason == "precision");
  CHECK(rows.at("steady")->runs == 3);
  CHECK(*rows.at("wild")->stop_reason == "max");
  CHECK(rows.at("wild")->runs == 12);
  CHECK(*rows.at("noisy")->stop_reason == "precision");
  CHECK(rows.at("noisy")->stop_text == stats::stop_reason_text(
                                           [&] {
                                             for (const auto& [cell, d] : outcome.decisions)
                                               if (cell.condition == "noisy") return d;
                                             return stats::StopDecision{};
                                           }(),
                                           stats::PrecisionRule{3, 12, 0.05}));

  // Markdown: a column of runs with the half-width, † on the cell stopped by max, and the note.
  const auto markdown = report::make_exporter("markdown")->render(table);
  CHECK(markdown.find("| Runs (stop) |") != std::string::npos);
  CHECK(markdown.find(fmt::format("| 12†, ±{:.1f}% |", *rows.at("wild")->stop_relative_half_width *
                                                           100)) != std::string::npos);
  CHECK(markdown.find(fmt::format("| 3, ±{:.1f}% |", *rows.at("steady")->stop_relative_half_width *
                                                         100)) != std::string::npos);
  CHECK(markdown.find("- Runs by precision: each cell got runs until the 95% interval of its mean "
                      "epoch time had a half-width of at most ±5% of the mean (at least 3, at "
                      "most 12 runs;") != std::string::npos);
  // LaTeX: the same in math mode.
  const auto latex = report::make_exporter("latex")->render(table);
  CHECK(latex.find("12$^{\\dagger}$, $\\pm$") != std::string::npos);
  // JSON: the reason, the half-width and the sentence per row.
  const auto json = nlohmann::json::parse(report::make_exporter("json")->render(table));
  for (const auto& row : json["rows"]) {
    const auto& own = *rows.at(row["condition"].get<std::string>());
    CHECK(row["runs"] == own.runs);
    CHECK(row["stop_reason"] == *own.stop_reason);
    CHECK(row["stop"] == own.stop_text);
  }
  // The table carries the file's rule (integer repetitions: none, the next test case).
  REQUIRE(table.repetition_rule);
  CHECK(table.repetition_rule->min_runs == 3);
  CHECK(table.repetition_rule->max_runs == 12);
  CHECK(table.repetition_rule->precision == 0.05);

  SUBCASE("after a crash mid-matrix and --resume the report says the same") {
    test::TempDir other;
    const auto resumed_path = (other / "p.db").string();
    ExperimentOutcome rest;
    {
      auto resumed = db::Database::open(resumed_path);
      NoisyTrainer again;
      again.crash_at = 14;
      FakeExecutor first([&](const LaunchSpec& spec) { return again(spec); });
      const auto context = test::context_for(experiment);
      CHECK_THROWS(run_experiment(experiment, plans, first, resumed, context));
      auto instance = resume_instance(resumed, context, plans);
      FakeExecutor second([&](const LaunchSpec& spec) { return again(spec); });
      rest = run_instance(experiment, instance, second, resumed);
    }
    const auto reopened = db::Database::open(resumed_path, db::OpenMode::ReadOnly);
    const auto after =
        report::report_of(report::load_runs(reopened, {}), std::nullopt, "run", "auto");
    check_agrees(after, rest);
    for (const auto& [condition, row] : rows_by_condition(after)) {
      CHECK(row->runs == rows.at(condition)->runs);
      CHECK(*row->stop_reason == *rows.at(condition)->stop_reason);
    }
  }
}

TEST_CASE("integer repetitions: no stop column, no stop keys") {
  test::TempDir dir;
  const auto path = dir / "q.db";
  std::filesystem::copy_file(test::data_dir() / "db" / "quickstart.db", path);
  const auto database = db::Database::open(path.string(), db::OpenMode::ReadOnly);
  const auto table =
      report::report_of(report::load_runs(database, {}), std::nullopt, "run", "auto");
  CHECK_FALSE(table.repetition_rule);
  for (const auto& row : table.rows) CHECK_FALSE(row.stop_reason);
  CHECK(report::make_exporter("markdown")->render(table).find("Runs (stop)") == std::string::npos);
  CHECK(report::make_exporter("json")->render(table).find("stop_reason") == std::string::npos);
}

TEST_CASE("run's header with a precision rule: a bound, and on resume what is stored") {
  orchestrator::Instance instance;
  instance.record.id = 4;
  instance.pending.resize(36);
  CHECK(cli::describe_matrix(instance, false) == "36 runs");
  CHECK(cli::describe_matrix(instance, true) == "at most 36 runs as the precision rule decides");
  instance.resumed = true;
  instance.pending.resize(20);
  instance.run_means[orchestrator::CellKey{}] = {1.0, 1.1, 0.9};
  CHECK(cli::describe_matrix(instance, true) ==
        "resuming instance 4: 3 ok runs stored, at most 20 more as the precision rule decides");
}
