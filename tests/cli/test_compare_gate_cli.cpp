// Issue 23, item 4: a --fail-if-slower gate cannot pass by accident. A compared cell with one run
// on a side (run-to-run variation unknown, the default of one repetition) made the gate exit 0
// however much slower it was; it now exits 4 naming the cell and its runs, unless
// --allow-too-few.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "cli/cli_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

void execute(const fs::path& path, const std::string& sql) { test::execute_sql(path, sql); }

constexpr const char* kCell =
    "SELECT r.id FROM runs r JOIN run_factors f ON f.run_id = r.id WHERE r.np = 2 AND "
    "r.condition = 'hvd' AND f.factor = 'model' AND f.level = 'inception_v3'";

}  // namespace

TEST_CASE("compare --fail-if-slower: a cell with one run is a distinct failure, not a pass") {
  test::TempDir dir;
  const auto baseline = dir / "old.db", candidate = dir / "new.db";
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", baseline);
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", candidate);
  // The candidate's inception_v3 np=2 cell: 9.5 times slower, and one ok run left.
  execute(candidate, std::string("UPDATE epochs SET duration_seconds = duration_seconds * 9.5 "
                                 "WHERE run_id IN (") +
                         kCell + ")");
  execute(candidate,
          std::string("UPDATE runs SET status = 'failed', error = 'test' WHERE id IN (") + kCell +
              ") AND id <> (SELECT min(id) FROM (" + kCell + "))");

  const auto gate = test::invoke({"compare", "--db", baseline.string(), "--to-db",
                                  candidate.string(), "--fail-if-slower", "5"});
  INFO(gate.out, gate.err);
  CHECK(gate.status == 4);
  CHECK(gate.err.find("--fail-if-slower cannot test 1 cell") != std::string::npos);
  CHECK(gate.err.find("hvd model=inception_v3 np=2 (baseline ") != std::string::npos);
  CHECK(gate.err.find(", candidate 1 run)") != std::string::npos);
  CHECK(gate.err.find("--allow-too-few") != std::string::npos);

  const auto allowed =
      test::invoke({"compare", "--db", baseline.string(), "--to-db", candidate.string(),
                    "--fail-if-slower", "5", "--allow-too-few"});
  CHECK(allowed.status == 0);
  CHECK(allowed.err.find("not tested (too few runs), passed anyway: hvd model=inception_v3 np=2") !=
        std::string::npos);

  // Without a gate, compare reports as before (the cell says "too few runs") and exits 0.
  const auto plain =
      test::invoke({"compare", "--db", baseline.string(), "--to-db", candidate.string()});
  CHECK(plain.status == 0);
  CHECK(plain.out.find("too few runs") != std::string::npos);
}
