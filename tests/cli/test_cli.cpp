// The command line: the subcommand table, usage errors, read-only queries, bad input.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli_support.hpp"
#include "db/database.hpp"
#include "orchestrator/experiment.hpp"
#include "report/analysis/report.hpp"
#include "report/data/csv_table.hpp"
#include "stats/error.hpp"
#include "test_support.hpp"

using namespace scalebench;
using test::invoke;

namespace {

// A database with one experiment and one run of two epochs.
void make_database(const std::string& path) {
  auto database = db::Database::open(path);
  db::ExperimentRecord experiment;
  experiment.name = "demo";
  experiment.started_at = "2026-11-22T00:00:00.000000Z";
  const auto id = database.insert_experiment(experiment);
  db::RunBundle bundle;
  bundle.run.experiment_id = id;
  bundle.run.experiment = "demo";
  bundle.run.condition = "single";
  bundle.run.launcher = "single";
  bundle.run.status = db::RunStatus::Ok;
  bundle.run.exit_code = 0;
  bundle.run.started_at = bundle.run.ended_at = experiment.started_at;
  bundle.epochs = {db::EpochRecord{0, 1, 2, 0.5, 1.25, 1.2, {}, {}},
                   db::EpochRecord{0, 2, 2, 1.75, 1.5, {}, {}, {}}};
  bundle.lines = {db::LineRecord{0, 0, 0.5, "stdout", {}, "Epoch 1/2"},
                  db::LineRecord{0, 1, 1.75, "stdout", {}, "Epoch 2/2"}};
  database.insert_run(bundle);
}

}  // namespace

TEST_CASE("an unknown subcommand gets a suggestion and exit status 2") {
  const auto result = invoke({"rnu", "x.json"});
  CHECK(result.status == 2);
  CHECK(result.err ==
        "scalebench: unknown command 'rnu', did you mean 'run'?; `scalebench help` lists them\n");
  CHECK(invoke({"qeury"}).err.find("did you mean 'query'?") != std::string::npos);
  CHECK(invoke({"zzzzzz"}).err ==
        "scalebench: unknown command 'zzzzzz'; `scalebench help` lists them\n");
}

TEST_CASE("help lists every subcommand of the table") {
  const auto result = invoke({"help"});
  CHECK(result.status == 0);
  for (const auto& command : cli::subcommands()) {
    CHECK(result.out.find(std::string(command.name)) != std::string::npos);
    CHECK(result.out.find(std::string(command.summary)) != std::string::npos);
  }
  CHECK(invoke({}).status == 2);
  CHECK(invoke({"run", "--help"}).out.find("--dry-run") != std::string::npos);
  CHECK(invoke({"run"}).status == 2);  // the experiment file is required
}

TEST_CASE("query prints an aligned table or CSV") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  make_database(path);
  const auto table =
      invoke({"query", "--db", path,
              "SELECT epoch, duration_seconds AS d, trainer_seconds FROM epochs ORDER BY epoch"});
  CHECK(table.status == 0);
  CHECK(table.out ==
        "epoch  d     trainer_seconds\n"
        "-----  ----  ---------------\n"
        "1      1.25  1.2\n"
        "2      1.5   NULL\n"
        "(2 rows)\n");
  const auto csv = invoke(
      {"query", "--db", path, "--csv", "SELECT text, 'a,\"b' AS odd FROM lines ORDER BY seq"});
  CHECK(csv.out == "text,odd\r\nEpoch 1/2,\"a,\"\"b\"\r\nEpoch 2/2,\"a,\"\"b\"\r\n");
}

TEST_CASE("query refuses to write, and the database is unchanged") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  make_database(path);
  for (const std::string sql :
       {"DELETE FROM runs", "UPDATE epochs SET duration_seconds = 0", "DROP TABLE lines",
        "INSERT INTO experiments(name) VALUES ('x')", "SELECT 1; DELETE FROM runs"}) {
    const auto result = invoke({"query", "--db", path, sql});
    CHECK_MESSAGE(result.status == 1, sql);
    CHECK(result.err.rfind("scalebench: error: ", 0) == 0);
  }
  const auto count = invoke({"query", "--db", path, "--csv",
                             "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM epochs), "
                             "(SELECT count(*) FROM lines)"});
  CHECK(count.out.substr(count.out.find("\r\n") + 2) == "1,2,2\r\n");
  const auto syntax = invoke({"query", "--db", path, "SELEC 1"});
  CHECK(syntax.status == 1);
  CHECK(syntax.err.find("syntax error") != std::string::npos);
}

TEST_CASE("a malformed experiment file: one clear line, nothing written") {
  test::TempDir dir;
  const auto experiment = dir / "bad.json";
  std::ofstream(experiment)
      << R"({"name": "bad", "conditions": [{"name": "m", "launcher": "mpirun", "np": [2, -1]}]})";
  const auto db_path = dir / "results" / "r.db";
  const auto result = invoke({"run", experiment.string(), "--db", db_path.string()});
  CHECK(result.status == 1);
  CHECK(result.err == "scalebench: error: " + experiment.string() +
                          ": field \"conditions[0].np[1]\": expected a positive integer (at most "
                          "1000000), got -1\n");
  CHECK(!std::filesystem::exists(db_path));

  // An existing database is left exactly as it was.
  make_database(db_path.string());
  const auto before = std::filesystem::file_size(db_path);
  CHECK(invoke({"run", experiment.string(), "--db", db_path.string()}).status == 1);
  CHECK(std::filesystem::file_size(db_path) == before);
  CHECK(invoke({"query", "--db", db_path.string(), "--csv", "SELECT count(*) FROM experiments"})
            .out == "count(*)\r\n1\r\n");
}

TEST_CASE("report and plot on a missing experiment name fail clearly") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  make_database(path);
  const auto result = invoke({"report", "--db", path, "--experiment", "nope"});
  CHECK(result.status == 1);
  CHECK(result.err.find("no experiment named \"nope\"") != std::string::npos);
  CHECK(invoke({"report", "--db", path, "--format", "xml"}).status == 2);
}

// One error root: the CLI's single catch relies on it.

static_assert(std::is_base_of_v<Error, db::DatabaseError>);
static_assert(std::is_base_of_v<Error, db::DatabaseBusy>);
static_assert(std::is_base_of_v<Error, db::QueryLimitError>);
static_assert(std::is_base_of_v<Error, orchestrator::ExperimentError>);
static_assert(std::is_base_of_v<Error, stats::StatsError>);
static_assert(std::is_base_of_v<Error, report::ReportError>);
static_assert(std::is_base_of_v<Error, report::InputError>);

TEST_CASE("an error from each module reads as one line and exit 1") {
  test::TempDir dir;
  const auto bad_json = (dir / "bad.json").string();
  std::ofstream(bad_json) << "{\"name\": ";
  const auto csv = (dir / "one.csv").string();
  std::ofstream(csv) << "y,g\n1,a\n2,a\n";
  const std::vector<std::vector<std::string>> commands{
      {"run", bad_json, "--db", (dir / "r.db").string()},               // ExperimentError
      {"report", "--db", (dir / "missing.db").string()},                // DatabaseError
      {"stats", "--csv", csv, "--response", "y", "--factor", "g"},      // StatsError: one group
      {"stats", "--csv", csv, "--response", "nope", "--factor", "g"}};  // InputError
  for (const auto& args : commands) {
    CAPTURE(args[0]);
    std::ostringstream out, err;
    CHECK(cli::run_cli(args, out, err) == 1);
    const auto text = err.str();
    CHECK(text.rfind("scalebench: error: ", 0) == 0);
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  }
}
