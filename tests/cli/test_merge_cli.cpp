// `scalebench merge SIDE.db... --into DB` (issue 23, item 3): side files of older schema versions
// merged and left as they were, duplicates refused with exit 1, bad sources named.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_support.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;
using test::invoke;
namespace fs = std::filesystem;

namespace {

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("merge: side files of schema 3 and 5 into a new database, then refused as duplicates") {
  test::TempDir dir;
  const auto v3 = dir / "side3.db", v5 = dir / "side5.db", into = dir / "results.db";
  fs::copy_file(test::data_dir() / "db" / "schema-v3.db", v3);
  fs::copy_file(test::data_dir() / "db" / "schema-v5.db", v5);
  const std::string v3_before = bytes_of(v3);

  const auto first = invoke({"merge", v3.string(), v5.string(), "--into", into.string()});
  CAPTURE(first.err);
  CHECK(first.status == 0);
  CHECK(first.out.find("side3.db: merged 7 runs into " + into.string() +
                       " (2 instances new there)") != std::string::npos);
  CHECK(first.out.find("side5.db: merged 6 runs") != std::string::npos);
  CHECK(bytes_of(v3) == v3_before);  // migrated in a private copy, not in place
  const auto count = invoke({"query", "--db", into.string(), "--csv", "SELECT count(*) FROM runs"});
  CHECK(count.out == "count(*)\r\n13\r\n");

  const auto again = invoke({"merge", v3.string(), "--into", into.string()});
  CHECK(again.status == 1);
  CHECK(again.err.find("7 runs are already merged, nothing written") != std::string::npos);
  const auto skipping =
      invoke({"merge", v3.string(), "--into", into.string(), "--skip-duplicates"});
  CHECK(skipping.status == 0);
  CHECK(skipping.out.find("merged 0 runs into") != std::string::npos);
  CHECK(skipping.out.find("7 already there, skipped") != std::string::npos);
  CHECK(invoke({"query", "--db", into.string(), "--csv", "SELECT count(*) FROM runs"}).out ==
        "count(*)\r\n13\r\n");
}

TEST_CASE("merge: the target itself and a missing source are refused, naming them") {
  test::TempDir dir;
  const auto into = dir / "results.db";
  fs::copy_file(test::data_dir() / "db" / "schema-v6.db", into);
  const auto self = invoke({"merge", into.string(), "--into", into.string()});
  CHECK(self.status == 1);
  CHECK(self.err.find(into.string() + ": is the database to merge into") != std::string::npos);
  const auto missing = invoke({"merge", (dir / "nope.db").string(), "--into", into.string()});
  CHECK(missing.status == 1);
  CHECK(missing.err.find("nope.db: no such database file") != std::string::npos);
}

TEST_CASE(
    "merge: an empty, truncated or garbage side file is refused naming it, target as it was") {
  test::TempDir dir;
  const auto into = dir / "results.db";
  fs::copy_file(test::data_dir() / "db" / "schema-v6.db", into);
  const auto runs_before = scalebench::db::Database::open(into.string()).runs().size();
  std::ofstream(dir / "empty.db").close();
  const auto empty = invoke({"merge", (dir / "empty.db").string(), "--into", into.string()});
  CHECK(empty.status == 1);  // was "merged 0 runs", exit 0
  CHECK(empty.err.find("empty.db: an empty file, not a scalebench database") != std::string::npos);
  {
    std::ifstream whole(test::data_dir() / "db" / "schema-v6.db", std::ios::binary);
    std::string bytes(4096, '\0');
    whole.read(bytes.data(), 4096);
    std::ofstream(dir / "trunc.db", std::ios::binary) << bytes;
    std::ofstream(dir / "garbage.db") << std::string(8192, 'x');
  }
  for (const char* name : {"trunc.db", "garbage.db"}) {
    CAPTURE(name);
    const auto bad = invoke({"merge", (dir / name).string(), "--into", into.string()});
    CHECK(bad.status == 1);
    // The user's file is named, not the private copy (.scalebench-<pid>-*/side.db).
    CHECK(bad.err.find((dir / name).string()) != std::string::npos);
    CHECK(bad.err.find("side.db") == std::string::npos);
  }
  const auto after = scalebench::db::Database::open(into.string());
  CHECK(after.runs().size() == runs_before);
}
