// scalebench compare as a user runs it: two databases of the Table 2 quick study, the candidate
// made 30% slower in one cell, a CI gate that catches it, and the refusals.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

void execute(const fs::path& path, const std::string& sql) { test::execute_sql(path, sql); }

}  // namespace

TEST_CASE("compare: a slower cell in another database is found, and --fail-if-slower exits 3") {
  test::TempDir dir;
  const auto baseline = dir / "old.db", candidate = dir / "new.db";
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", baseline);
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", candidate);
  // Every epoch of inception_v3 at np=2 takes 30% longer in the candidate.
  execute(candidate,
          "UPDATE epochs SET duration_seconds = duration_seconds * 1.3 WHERE run_id IN (SELECT "
          "r.id FROM runs r JOIN run_factors f ON f.run_id = r.id WHERE r.np = 2 AND f.factor = "
          "'model' AND f.level = 'inception_v3')");

  const auto text =
      test::invoke({"compare", "--db", baseline.string(), "--to-db", candidate.string()});
  INFO(text.out, text.err);
  REQUIRE(text.status == 0);
  CHECK(text.out.find("hvd model=inception_v3 np=2") != std::string::npos);
  const auto json =
      test::invoke({"compare", "--db", baseline.string(), "--to-db", candidate.string(), "--json"});
  REQUIRE(json.status == 0);
  const auto parsed = nlohmann::json::parse(json.out);
  REQUIRE(parsed["cells"].size() == 6);
  for (const auto& cell : parsed["cells"]) {
    INFO(cell.dump());
    if (cell["cell"] == "hvd model=inception_v3 np=2") {
      CHECK(cell["ratio"].get<double>() == doctest::Approx(1.3));
      CHECK(cell["verdict"] == "slower");
    } else {
      CHECK(cell["ratio"].get<double>() == doctest::Approx(1.0));
      CHECK(cell["verdict"] != "slower");
      CHECK(cell["verdict"] != "faster");
    }
  }

  const auto gate = test::invoke({"compare", "--db", baseline.string(), "--to-db",
                                  candidate.string(), "--fail-if-slower", "10"});
  CHECK(gate.status == 3);
  CHECK(gate.err.find("slower by 10% or more") != std::string::npos);
  CHECK(gate.err.find("hvd model=inception_v3 np=2 (+30.0%)") != std::string::npos);
  const auto loose = test::invoke({"compare", "--db", baseline.string(), "--to-db",
                                   candidate.string(), "--fail-if-slower", "50"});
  CHECK(loose.status == 0);
}

TEST_CASE("compare: the same thing twice, or a missing experiment, is refused clearly") {
  test::TempDir dir;
  const auto db = dir / "t.db";
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto same = test::invoke({"compare", "--db", db.string()});
  CHECK(same.status == 1);
  CHECK(same.err.find("compare needs two different things") != std::string::npos);
  const auto missing = test::invoke({"compare", "--db", db.string(), "--to-experiment", "nope"});
  CHECK(missing.status == 1);
  CHECK(missing.err.find("nope") != std::string::npos);
}
