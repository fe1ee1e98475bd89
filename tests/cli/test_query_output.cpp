// Tests for `scalebench query` (the limits' options) and for the output paths of
// `report` and `plot` in cli/commands.cpp: names from the database, the database itself as the
// output, planted symlinks, `-o dir/`, missing databases.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>
#include <vector>

#include "cli/cli.hpp"
#include "cli_support.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;
using test::has_raw_control;
using test::invoke;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool have_gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

// A database with one experiment named `experiment`: a run of two epochs whose first output
// line is `line`.
void make_database(const fs::path& path, const std::string& experiment,
                   const std::string& line = "Epoch 1/2") {
  auto database = db::Database::open(path.string());
  db::ExperimentRecord record;
  record.name = experiment;
  record.started_at = "2026-11-22T00:00:00.000000Z";
  const auto id = database.insert_experiment(record);
  db::RunBundle bundle;
  bundle.run.experiment_id = id;
  bundle.run.experiment = experiment;
  bundle.run.condition = "single";
  bundle.run.launcher = "single";
  bundle.run.status = db::RunStatus::Ok;
  bundle.run.exit_code = 0;
  bundle.run.started_at = bundle.run.ended_at = record.started_at;
  bundle.epochs = {db::EpochRecord{0, 1, 2, 0.5, 1.25, 1.2, {}, {}},
                   db::EpochRecord{0, 2, 2, 1.75, 1.5, {}, {}, {}}};
  bundle.lines = {db::LineRecord{0, 0, 0.5, "stdout", {}, line},
                  db::LineRecord{0, 1, 1.75, "stdout", {}, "Epoch 2/2"}};
  database.insert_run(bundle);
}

}  // namespace

TEST_CASE("query: trainer output with escape sequences and NULs reaches the table escaped") {
  test::TempDir dir;
  const auto path = dir / "r.db";
  make_database(path, "demo",
                "\x1b[2J\x1b]0;owned\x07 epoch \xC2\x9B"
                "1m");
  const auto result = invoke({"query", "--db", path.string(),
                              "SELECT text, CAST(x'41001b42' AS TEXT) || 'end' AS raw FROM lines "
                              "WHERE seq = 0"});
  CHECK(result.status == 0);
  CHECK_FALSE(has_raw_control(result.out));
  CHECK(result.out.find("\\x1b[2J\\x1b]0;owned\\x07 epoch \\u009b1m") != std::string::npos);
  CHECK(result.out.find("A\\x00\\x1bBend") != std::string::npos);
  // --csv into a pipe or file (not a terminal) stays byte for byte.
  const auto csv =
      invoke({"query", "--db", path.string(), "--csv", "SELECT text FROM lines WHERE seq = 0"});
  CHECK(csv.out.find("\x1b[2J") != std::string::npos);
}

// ---- limits and functions through the command line
// ------------------------------------------------

TEST_CASE("query: each limit's error names the option that raises it") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  make_database(path, "demo");
  const std::string endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) ";

  const auto rows =
      invoke({"query", "--db", path, "--max-rows", "10", endless + "SELECT x FROM c"});
  CHECK(rows.status == 1);
  CHECK(rows.err ==
        "scalebench: error: query: more than 10 rows (the row limit); add a LIMIT "
        "clause or raise the limit; raise it with --max-rows N\n");

  const auto time =
      invoke({"query", "--db", path, "--timeout", "0.2", endless + "SELECT count(*) FROM c"});
  CHECK(time.status == 1);
  CHECK(time.err ==
        "scalebench: error: query: stopped at the time limit of 0.2 s; raise it with "
        "--timeout SECONDS\n");

  const auto memory =
      invoke({"query", "--db", path, "--max-memory", "1MiB", "SELECT length(zeroblob(2000000))"});
  CHECK(memory.status == 1);
  CHECK(memory.err.find("memory limit of 1 MiB") != std::string::npos);
  CHECK(memory.err.find("raise it with --max-memory SIZE") != std::string::npos);
  CHECK(invoke({"query", "--db", path, "--max-memory", "4MiB", "SELECT length(zeroblob(2000000))"})
            .out.find("2000000") != std::string::npos);

  CHECK(invoke({"query", "--db", path, "--timeout", "0", "SELECT 1"}).status == 2);
  CHECK(invoke({"query", "--db", path, "--max-rows", "-1", "SELECT 1"}).status == 2);
  CHECK(invoke({"query", "--help"}).out.find("when stdout is a terminal") != std::string::npos);

  const auto tokenizer = invoke({"query", "--db", path, "SELECT hex(fts3_tokenizer('simple'))"});
  CHECK(tokenizer.status == 1);
  CHECK(tokenizer.err.find("function fts3_tokenizer() is not allowed") != std::string::npos);
}

// ---- missing databases ------------------------------------------------------------------------

TEST_CASE("report, stats, plot and query on a missing database: an error naming it, no file") {
  test::TempDir dir;
  const auto path = (dir / "missing.db").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "--db", path},
        std::vector<std::string>{"report", "--db", path, "-o", (dir / "t.md").string()},
        std::vector<std::string>{"stats", "--db", path},
        std::vector<std::string>{"plot", "--db", path},
        std::vector<std::string>{"query", "--db", path, "SELECT 1"}}) {
    CAPTURE(args[0]);
    const auto result = invoke(args);
    CHECK(result.status == 1);
    CHECK(result.err.find(path + ": opening read-only: no such file") != std::string::npos);
    CHECK_FALSE(fs::exists(path));
    CHECK(fs::is_empty(dir.path()));
  }
}

// ---- the database is never the output ---------------------------------------------------------

TEST_CASE("report -o the database itself (or a name for it) is refused, the database intact") {
  test::TempDir dir;
  const auto path = dir / "r.db";
  make_database(path, "demo");
  const std::string before = read_file(path);
  fs::create_symlink(path, dir / "alias.md");
  for (const fs::path& output : {path, dir / "." / "r.db", dir / "alias.md", dir / "r.db-wal"}) {
    CAPTURE(output);
    const auto result = invoke({"report", "--db", path.string(), "-o", output.string()});
    CHECK(result.status == 1);
    CHECK(result.err.find("refusing to write there: it is the results database") !=
          std::string::npos);
  }
  CHECK(read_file(path) == before);
  CHECK(invoke({"query", "--db", path.string(), "--csv", "SELECT count(*) FROM epochs"}).out ==
        "count(*)\r\n2\r\n");

  // plot whose file names would land on the database.
  const auto gp_db = dir / "fig.gp";
  fs::copy_file(path, gp_db);
  const std::string gp_before = read_file(gp_db);
  const auto plot = invoke({"plot", "--db", gp_db.string(), "-o", (dir / "fig").string()});
  CHECK(plot.status == 1);
  CHECK(plot.err.find("it is the results database") != std::string::npos);
  CHECK(read_file(gp_db) == gp_before);
}

TEST_CASE("report -o refuses a symlink, a FIFO and a device, and model --plot a database") {
  test::TempDir dir;
  const auto path = dir / "r.db";
  make_database(path, "demo");
  const auto victim = dir / "victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir / "table.md");
  REQUIRE(::mkfifo((dir / "fifo.md").c_str(), 0600) == 0);
  // The system's own /dev/full and /dev/stdout are not written at (a regression would replace
  // them): a device node made here stands for them where the test runs as root.
  std::vector<std::pair<fs::path, std::string>> cases{{dir / "table.md", "a symbolic link"},
                                                      {dir / "fifo.md", "a FIFO"}};
  if (::geteuid() == 0 && ::mknod((dir / "full").c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0)
    cases.emplace_back(dir / "full", "a character device");
  for (const auto& [output, what] : cases) {
    CAPTURE(output);
    const auto result = invoke({"report", "--db", path.string(), "-o", output.string()});
    CHECK(result.status == 1);
    CHECK(result.err.find(output.string() + ": refusing to write there: it is " + what) !=
          std::string::npos);
  }
  CHECK(read_file(victim) == "precious");
  CHECK(fs::is_symlink(fs::symlink_status(dir / "table.md")));
  CHECK(fs::is_fifo(fs::symlink_status(dir / "fifo.md")));
  if (cases.size() == 3) CHECK(fs::is_character_file(fs::symlink_status(dir / "full")));

  // model --plot PREFIX where PREFIX.dat is a database (not the one read: model's presets need
  // none): refused before any file is written, the database intact.
  const auto other = dir / "h.dat";
  fs::copy_file(path, other);
  const std::string before = read_file(other);
  const auto model =
      invoke({"model", "--images-per-second", "100", "--network", "10gbe", "--parameters",
              "1000000", "--batch-size", "32", "--plot", (dir / "h").string()});
  CHECK(model.status == 1);
  CHECK(model.err.find("h.dat: refusing to write there: it is a SQLite database") !=
        std::string::npos);
  CHECK(read_file(other) == before);
  CHECK_FALSE(fs::exists(dir / "h.gp"));
}

TEST_CASE("a write error on standard output is an error: report, query, model > /dev/full") {
  if (!fs::is_character_file(fs::status("/dev/full"))) {
    MESSAGE("no /dev/full here");
    return;
  }
  test::TempDir dir;
  const auto path = dir / "r.db";
  make_database(path, "demo");
  for (const std::string& command :
       {"report --db " + test::shell_quoted(path.string()),
        "report --format html --db " + test::shell_quoted(path.string()),
        "query --db " + test::shell_quoted(path.string()) + " 'SELECT 1'",
        std::string("model --list-networks")}) {
    CAPTURE(command);
    const std::string line = test::shell_quoted((test::binary_dir() / "scalebench").string()) +
                             " " + command + " >/dev/full 2>" +
                             test::shell_quoted((dir / "err").string());
    const int status = std::system(line.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(read_file(dir / "err").find("cannot write to standard output") != std::string::npos);
  }
}

// ---- plot's file names ------------------------------------------------------------------------

// With gnuplot the four files exist; without it the data and script do (and plot fails).
void check_figure(const test::CliResult& result, const fs::path& prefix) {
  CAPTURE(result.err);
  fs::path script = prefix;
  script += ".gp";
  CHECK(fs::is_regular_file(script));
  if (have_gnuplot()) {
    CHECK(result.status == 0);
    fs::path svg = prefix;
    svg += ".svg";
    CHECK(fs::is_regular_file(svg));
  } else {
    CHECK(result.err.find("gnuplot not found") != std::string::npos);
  }
}

TEST_CASE("plot -o dir/ and plot -o an existing directory write dir/<experiment>-scaling.*") {
  test::TempDir dir;
  const auto path = dir / "r.db";
  make_database(path, "demo");
  const auto slash = invoke({"plot", "--db", path.string(), "-o", (dir / "new").string() + "/"});
  check_figure(slash, dir / "new" / "demo-scaling");
  CHECK_FALSE(fs::exists(dir / "new" / ".svg"));
  CHECK_FALSE(fs::exists(dir / "new" / ".gp"));

  fs::create_directory(dir / "existing");
  const auto existing = invoke({"plot", "--db", path.string(), "-o", (dir / "existing").string()});
  check_figure(existing, dir / "existing" / "demo-scaling");
  CHECK_FALSE(fs::exists(dir / "existing.gp"));

  // A plain prefix stays a prefix.
  const auto prefix = invoke({"plot", "--db", path.string(), "-o", (dir / "fig").string()});
  check_figure(prefix, dir / "fig");
}

TEST_CASE("plot: an experiment named ../../x/evil stays in the database's folder") {
  test::TempDir dir;
  const auto folder = dir / "a" / "b";
  fs::create_directories(folder);
  const auto path = folder / "r.db";
  make_database(path, "../../x/evil");
  const auto result = invoke({"plot", "--db", path.string()});
  check_figure(result, folder / "_._.._x_evil-scaling");
  CHECK_FALSE(fs::exists(dir / "x"));
  CHECK_FALSE(fs::exists(dir / "a" / "x"));
  // The directory holds the database and the figure's files, nothing else.
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    CAPTURE(entry.path());
    const std::string name = entry.path().filename().string();
    CHECK((entry.path().parent_path() == folder || entry.path() == folder ||
           entry.path() == dir / "a"));
    CHECK((name == "a" || name == "b" || name.rfind("r.db", 0) == 0 ||
           name.rfind("_._.._x_evil-scaling.", 0) == 0));
  }
}
