// The framework studies of issue "Other people's trainers" (item 6), quick variants run by the
// built binary: framework x np weak scaling on VGG-16, framework x task with test accuracy, and
// our scaling claim against PyTorch DDP with its verdict (the interaction contrast).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_support.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;

namespace {

std::optional<std::string> why_not() {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return "needs mpirun";
  if (std::system("/usr/bin/python3 -c 'import torch, torchvision' >/dev/null 2>&1") != 0)
    return "needs python3-torch and python3-torchvision (scripts/install-deps.sh installs them)";
  return std::nullopt;
}

std::string experiment_file(const std::string& name) {
  return (test::source_dir() / "experiments" / (name + ".json")).string();
}

}  // namespace

TEST_CASE("framework studies, quick: weak-scaling VGG-16, tasks with test accuracy, the verdict") {
  SCALEBENCH_SKIP_IF(why_not());
  test::TempDir dir;
  const auto db_path = (dir / "f.db").string();
  for (const char* name :
       {"framework-vgg16-weak-quick", "framework-tasks-quick", "scaling-vs-ddp-quick"}) {
    const auto run = test::run_binary({"run", experiment_file(name), "--db", db_path});
    INFO(name);
    INFO(run.out);
    REQUIRE(run.status == 0);
  }
  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);

  // Weak scaling: images per epoch = per-rank images x np, for both programs.
  for (const auto& r : database.runs("framework-vgg16-weak-quick")) {
    CHECK(r.status == db::RunStatus::Ok);
    CHECK(r.train_images == 16 * r.np);
  }
  // Tasks: both programs report a final test accuracy, kept per run and shown by report.
  const auto tasks = database.runs("framework-tasks-quick");
  CHECK(tasks.size() == 8);
  for (const auto& r : tasks) {
    CHECK(r.status == db::RunStatus::Ok);
    REQUIRE(r.test_accuracy);
    CHECK(*r.test_accuracy >= 0.0);
    CHECK(*r.test_accuracy <= 1.0);
  }
  const auto report = test::run_binary(
      {"report", "--db", db_path, "--experiment", "framework-tasks-quick", "--by", "framework"});
  INFO(report.out);
  CHECK(report.status == 0);
  CHECK(report.out.find("pytorch-ddp Test accuracy") != std::string::npos);
  CHECK(report.out.find("  - torch: ") != std::string::npos);  // provenance header
  CHECK(report.out.find("  - mpi: ") != std::string::npos);

  // The verdict: the framework x np interaction on log(images/s) with the ratio of speed-ups.
  const auto stats = test::run_binary(
      {"stats", "--db", db_path, "--experiment", "scaling-vs-ddp-quick", "--factor", "framework",
       "--factor", "np", "--response", "log_images_per_second", "--contrast", "--json"});
  INFO(stats.out);
  REQUIRE(stats.status == 0);
  const auto json = nlohmann::json::parse(stats.out);
  const auto& contrast = json.at("interaction_contrast");
  CHECK(contrast.at("df") == 4);  // 8 runs - 4 cells
  CHECK(contrast.at("cells").size() == 4);
  CHECK(contrast.at("cells")[0].at("framework") == "scalebench-train");
  CHECK(contrast.at("cells")[0].at("np") == "1");
  const double ratio = contrast.at("ratio_of_speedups");
  CHECK(ratio > 0);
  CHECK(contrast.at("ratio_ci")[0].get<double>() <= ratio);
  CHECK(contrast.at("ratio_ci")[1].get<double>() >= ratio);
}
