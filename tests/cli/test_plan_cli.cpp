// scalebench plan as a user runs it, on the committed quickstart fixture: every figure equal to
// R's (tests/data/stats/plan_reference.txt, scripts/reference/plan_reference.R), the refusals in
// one line naming the option or the cell, and the database never written.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_support.hpp"
#include "stats/reference_file.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A copy of the fixture, migrated to the current schema by a first read (as any read-only open
// of an older file does, docs/database.md), so that later reads leave every byte as it is.
fs::path quickstart_copy(const test::TempDir& dir) {
  const auto db = dir / "quickstart.db";
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  REQUIRE(test::invoke({"plan", "--db", db.string()}).status == 0);
  return db;
}

const char* const kCells[] = {"single", "mpirun np=1", "mpirun np=2"};

nlohmann::json plan_json(const fs::path& db, std::vector<std::string> extra) {
  std::vector<std::string> args = {"plan", "--db", db.string(), "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto result = test::invoke(args);
  INFO(result.err);
  REQUIRE(result.status == 0);
  return nlohmann::json::parse(result.out);
}

}  // namespace

TEST_CASE("plan: the quickstart fixture's runs for a precision equal R's") {
  test::TempDir dir;
  const auto db = quickstart_copy(dir);
  const auto lines =
      test::read_reference_lines("plan_reference.txt", "scripts/reference/plan_reference.R");
  std::size_t compared = 0;
  for (const auto& w : lines) {
    if (w[1] != "precision") continue;
    const auto plan = plan_json(db, {"--precision", w[3]});
    const auto& cell = plan["cells"][std::stoul(w[2])];
    INFO(cell.dump());
    CHECK(cell["cell"] == kCells[std::stoul(w[2])]);
    CHECK(cell["pilot_runs"] == 3);
    CHECK(std::abs(cell["mean_epoch_seconds"].get<double>() - std::stod(w[4])) < 1e-15);
    CHECK(std::abs(cell["sd_epoch_seconds"].get<double>() - std::stod(w[5])) < 1e-15);
    CHECK(cell["runs_needed"] == std::stoll(w[6]));
    ++compared;
  }
  CHECK(compared == 9);
}

TEST_CASE("plan: the quickstart fixture's runs to detect a difference equal R's") {
  test::TempDir dir;
  const auto db = quickstart_copy(dir);
  const auto lines =
      test::read_reference_lines("plan_reference.txt", "scripts/reference/plan_reference.R");
  std::size_t t_compared = 0, tukey_compared = 0, simulated = 0;
  for (const auto& w : lines) {
    if (w[0] != "quickstart" || (w[1] != "ttest" && w[1] != "tukey" && w[1] != "tukey_sim"))
      continue;
    const auto plan = plan_json(db, {"--detect", w[4], "--base", kCells[std::stoul(w[2])],
                                     "--power", w[1] == "tukey_sim" ? "0.8" : w[5]});
    CHECK(plan["family_cells"] == 3);
    CHECK(plan["family_df"] == 6);
    nlohmann::json pair;
    for (const auto& p : plan["pairs"])
      if (p["cell"] == kCells[std::stoul(w[3])]) pair = p;
    INFO(pair.dump());
    REQUIRE(pair.is_object());
    if (w[1] == "ttest") {  // power.t.test's n to 1e-6, the runs exactly
      CHECK(std::abs(pair["delta_seconds"].get<double>() - std::stod(w[6])) < 1e-15);
      CHECK(std::abs(pair["sd_seconds"].get<double>() - std::stod(w[7])) < 1e-15);
      CHECK(std::abs(pair["t_n"].get<double>() - std::stod(w[8])) < 1e-6);
      CHECK(pair["t_runs"] == std::stoll(w[9]));
      ++t_compared;
    } else if (w[1] == "tukey") {  // R's exact formula
      CHECK(std::abs(plan["family_sd_seconds"].get<double>() - std::stod(w[8])) < 1e-15);
      if (w[9] != "NA") CHECK(std::abs(pair["tukey_n"].get<double>() - std::stod(w[9])) < 1e-6);
      CHECK(pair["tukey_runs"] == std::stoll(w[10]));
      ++tukey_compared;
    } else if (std::stoll(w[5]) == pair["tukey_runs"].get<long long>()) {
      // At the runs plan gives, R's simulation of TukeyHSD reaches the power within 4 SE.
      const double p = std::stod(w[10]), se = std::stod(w[11]);
      CHECK(p > 0.8 - 4 * se);
      ++simulated;
    }
  }
  CHECK(t_compared == 12);
  CHECK(tukey_compared == 12);
  CHECK(simulated >= 4);
}

TEST_CASE("plan: the text table names the cells, the pairs and the fixed-sample rule") {
  test::TempDir dir;
  const auto db = quickstart_copy(dir);
  const auto text =
      test::invoke({"plan", "--db", db.string(), "--detect", "5%", "--base", "mpirun np=1"});
  INFO(text.out, text.err);
  REQUIRE(text.status == 0);
  CHECK(text.out.find("mpirun np=2 vs mpirun np=1") != std::string::npos);
  CHECK(text.out.find("single vs mpirun np=1") != std::string::npos);
  CHECK(text.out.find("\"repetitions\" rule decides on the fly") != std::string::npos);
  CHECK(text.out.find("k = 3 cells") != std::string::npos);
  const auto md = test::invoke({"plan", "--db", db.string(), "--format", "markdown"});
  CHECK(md.status == 0);
  CHECK(md.out.find("| single |") != std::string::npos);
}

TEST_CASE("plan: bad input is one line naming the option or the cell, the database untouched") {
  test::TempDir dir;
  const auto db = quickstart_copy(dir);
  const auto before = file_bytes(db);
  const auto refused = [&](std::vector<std::string> args, const std::string& names) {
    args.insert(args.begin(), {"plan", "--db", db.string()});
    const auto result = test::invoke(args);
    INFO(result.err);
    CHECK(result.status != 0);
    CHECK(result.out.empty());
    CHECK(result.err.find(names) != std::string::npos);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    CHECK(file_bytes(db) == before);
  };
  refused({"--detect", "5%"}, "--detect needs --base");
  refused({"--precision", "0"}, "--precision");
  refused({"--precision", "1.5"}, "--precision");
  refused({"--precision", "abc"}, "--precision 'abc'");
  refused({"--detect", "0%", "--base", "single"}, "--detect");
  refused({"--power", "0.9"}, "--power");
  refused({"--detect", "5%", "--base", "nosuch"}, "no group is labelled 'nosuch'");
  // A cell with one ok run: its SD is unknown. Made on a second copy; plan reads it only.
  const auto few = dir / "few.db";
  fs::copy_file(db, few);
  test::execute_sql(few, "UPDATE runs SET status = 'failed' WHERE id IN (6, 9)");
  const auto few_before = file_bytes(few);
  const auto result = test::invoke({"plan", "--db", few.string()});
  CHECK(result.status == 1);
  CHECK(result.err ==
        "scalebench: error: cell 'mpirun np=2' has 1 ok run: planning needs at least 2 per cell "
        "(their SD); run more repetitions first\n");
  CHECK(file_bytes(few) == few_before);
}
