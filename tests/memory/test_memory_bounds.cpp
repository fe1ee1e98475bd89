// Peak-memory bounds, checked in the build without sanitizers: AddressSanitizer's quarantine,
// shadow memory and interposed allocator change what a process holds, so these are the only
// cases the sanitizer job does not run (scripts/test.sh runs every other suite there only).
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <string>

#include "db/database.hpp"
#include "orchestrator/executor.hpp"
#include "orchestrator/runner.hpp"
#include "orchestrator/runner_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;
using test::context_for;

TEST_CASE("a run printing two million lines leaves the orchestrator's memory flat") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(
      R"({"name":"verbose","conditions":[{"name":"c","launcher":"command","np":[1],
          "command":["sh","-c","seq 1 2000000 | sed 's/$/ some training log text of sixty bytes or so/'"]}]})",
      "v.json");
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  ProcessExecutor executor;
  const auto outcome = run_experiment(experiment, expand_matrix(experiment, {"x", false}), executor,
                                      database, context_for(experiment));
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  const auto runs = database.runs("verbose");
  REQUIRE(runs.size() == 1);
  CHECK(database.lines(runs[0].id).size() == 2'000'000);
  const long grown_mib = (after.ru_maxrss - before.ru_maxrss) / 1024;  // ru_maxrss is in KiB
  MESSAGE("peak resident memory grew by ", grown_mib, " MiB for 2 million lines (~130 MB of text)");
  CHECK(grown_mib < 64);  // the old code held every line: about 300 MiB here
  CHECK(outcome.runs == 1);
}

TEST_CASE("query_read_only: SQLite's heap limit stops a growing aggregate") {
  // Under AddressSanitizer its allocator, interposed under the system SQLite, copies on every
  // realloc and SQLite's heap limit never fires for this query (it runs into the time limit).
  test::TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  db::QueryLimits limits;
  limits.max_memory_bytes = std::size_t{4} << 20;  // 4 MiB
  limits.timeout_seconds = 20;
  try {
    d.query_read_only(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT length(group_concat(x)) FROM (SELECT x FROM c LIMIT 3000000)",
        limits);
    FAIL("no limit reached");
  } catch (const db::QueryLimitError& e) {
    CHECK(e.limit() == db::QueryLimitError::Limit::Memory);
    CHECK(std::string(e.what()).find("memory limit of 4 MiB") != std::string::npos);
  }
}
