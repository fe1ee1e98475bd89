// The real thing: `scalebench run` launching the built trainer under mpirun with 2 ranks, then
// `report` and `plot` on what it stored. Skipped where mpirun or the trainer is missing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {
std::optional<std::string> why_no_mpirun_or_trainer(const fs::path& trainer) {
  if (fs::exists(trainer) && std::system("command -v mpirun >/dev/null 2>&1") == 0)
    return std::nullopt;
  return "needs mpirun and scalebench-train";
}
}  // namespace

TEST_CASE("scalebench run: real mpirun with 2 ranks, then report and plot") {
  const auto trainer = test::binary_dir() / "scalebench-train";
  SCALEBENCH_SKIP_IF(why_no_mpirun_or_trainer(trainer));
  test::TempDir dir;
  const auto experiment = dir / "e2e.json";
  std::ofstream(experiment) << R"({
    "name": "e2e",
    "repetitions": 1,
    "timeout_seconds": 120,
    "program": ")" << trainer.string()
                            << R"(",
    "trainer": {"model": "mlp", "dataset": "synthetic", "train-images": 2048, "test-images": 256,
                "epochs": 3, "batch-size": 64, "threads": 1},
    "conditions": [
      {"name": "single", "launcher": "single"},
      {"name": "mpirun", "launcher": "mpirun", "np": [1, 2], "oversubscribe": true}
    ]
  })";
  const auto db_path = (dir / "r.db").string();
  std::ostringstream out, err;
  const int status = cli::run_cli({"run", experiment.string(), "--db", db_path}, out, err);
  INFO(out.str());
  INFO(err.str());
  REQUIRE(status == 0);

  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("e2e");
  REQUIRE(runs.size() == 3);
  for (const auto& run : runs) {
    CHECK(run.status == db::RunStatus::Ok);
    const auto epochs = database.epochs(run.id);
    REQUIRE(epochs.size() == 3);
    for (const auto& epoch : epochs) {
      REQUIRE(epoch.duration_seconds);
      REQUIRE(epoch.trainer_seconds);
      // Lines stamped by the orchestrator agree with the trainer's own clock.
      CHECK(std::abs(*epoch.duration_seconds - *epoch.trainer_seconds) < 0.05);
    }
  }
  CHECK(runs[2].np == 2);
  CHECK(runs[2].command_line.find("mpirun -np 2 --tag-output") == 0);
  bool saw_rank0_tag = false;
  for (const auto& line : database.lines(runs[2].id)) saw_rank0_tag |= line.rank == 0;
  CHECK(saw_rank0_tag);

  std::ostringstream report, report_err;
  REQUIRE(cli::run_cli({"report", "--db", db_path}, report, report_err) == 0);
  CHECK(report.str().find("mpirun np=2") != std::string::npos);
  CHECK(report.str().find("ANOVA") != std::string::npos);

  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    std::ostringstream plot, plot_err;
    REQUIRE(cli::run_cli({"plot", "--db", db_path, "--output", (dir / "fig").string()}, plot,
                         plot_err) == 0);
    CHECK(fs::file_size(dir / "fig.png") > 1000);
    CHECK(fs::file_size(dir / "fig.svg") > 1000);
  }
}

TEST_CASE("scalebench run: the allreduce benchmark under real mpirun -np 2, its rows stored") {
  const auto trainer = test::binary_dir() / "scalebench-train";
  SCALEBENCH_SKIP_IF(why_no_mpirun_or_trainer(trainer));
  test::TempDir dir;
  const auto experiment = dir / "ar.json";
  std::ofstream(experiment) << R"({
    "name": "ar",
    "timeout_seconds": 60,
    "program": ")" << trainer.string()
                            << R"(",
    "trainer": {"benchmark": "allreduce", "max-bytes": "64K", "step-factor": 8, "iterations": 5},
    "conditions": [{"name": "mpi", "launcher": "mpirun", "np": [2], "oversubscribe": true}]
  })";
  const auto db_path = (dir / "r.db").string();
  std::ostringstream out, err;
  const int status = cli::run_cli({"run", experiment.string(), "--db", db_path}, out, err);
  INFO(out.str());
  INFO(err.str());
  REQUIRE(status == 0);
  CHECK(out.str().find("ok in ") != std::string::npos);
  CHECK(out.str().find("5 allreduce sizes, peak busbw ") != std::string::npos);
  CHECK(out.str().find("next: scalebench query --db ") != std::string::npos);

  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("ar");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].status == db::RunStatus::Ok);
  const auto rows = database.allreduce_results(runs[0].id);
  REQUIRE(rows.size() == 5);  // 8 B to 32 KiB by 8
  CHECK(rows.front().bytes == 8);
  CHECK(rows.back().bytes == 32768);
  for (const auto& row : rows) {
    CHECK(row.transport == "mpi");
    CHECK(row.wrong == 0);
    CHECK(row.time_us > 0);
    CHECK(row.busbw_gbs == row.algbw_gbs);  // two ranks
    // Read from rank 0's tagged line of the same run.
    CHECK(database.lines(runs[0].id)[static_cast<std::size_t>(row.seq)].rank == 0);
  }

  std::ostringstream report, report_err;
  CHECK(cli::run_cli({"report", "--db", db_path}, report, report_err) == 1);
  CHECK(report_err.str().find("is an allreduce benchmark") != std::string::npos);
}
