// The replications of issue 11, as a user runs them: the shipped quick experiment files through
// the built `scalebench` binary (run -> report --by -> stats -> plot --by), asserting the
// structure of what comes out, not timings; and the two-way ANOVA of `stats --db` against R's
// car::Anova on a committed database of the Table 2 quick variant.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::optional<std::string> why_not_runnable() {
  if (!fs::exists(test::binary_dir() / "scalebench") ||
      !fs::exists(test::binary_dir() / "scalebench-train"))
    return "needs the scalebench and scalebench-train binaries";
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return "needs mpirun";
  return std::nullopt;
}

bool have_gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

// R's output for one scope: term -> {F, p}.
std::map<std::string, std::pair<double, double>> r_reference(const fs::path& path,
                                                             const std::string& scope) {
  std::map<std::string, std::pair<double, double>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string in_scope, term, df, ss, f, p;
    fields >> in_scope >> term >> df >> ss >> f >> p;
    if (in_scope == scope && term != "Residuals") out[term] = {std::stod(f), std::stod(p)};
  }
  return out;
}

constexpr const char* kRunMeansSql =
    "SELECT run_id, condition, model, np, avg(duration_seconds) AS mean_epoch_seconds FROM "
    "epoch_levels WHERE status = 'ok' GROUP BY run_id ORDER BY run_id";

// The F and p of each effect in `stats --json` output against R's for `scope`.
void check_against_r(const std::string& stats_json, const std::string& scope) {
  const auto json = nlohmann::json::parse(stats_json);
  CHECK(json["ss_type"] == "II");
  CHECK(json["unit"] == "run");
  const auto reference =
      r_reference(test::data_dir() / "stats" / "table2_two_way_reference.txt", scope);
  REQUIRE(reference.size() == 3);
  std::size_t compared = 0;
  for (const auto& term : json["anova"]) {
    const auto name = term["term"].get<std::string>();
    if (name == "Residuals") continue;
    REQUIRE(reference.contains(name));
    CHECK(term["F"].get<double>() == doctest::Approx(reference.at(name).first).epsilon(1e-10));
    CHECK(term["p"].get<double>() == doctest::Approx(reference.at(name).second).epsilon(1e-8));
    ++compared;
  }
  CHECK(compared == 3);
}

}  // namespace

TEST_CASE("stats --db --factor model --factor np gives car::Anova's type II F on the run means") {
  test::TempDir dir;
  const auto db_path = dir / "table2.db";
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db_path);

  // The run means R analysed are those scalebench exports.
  const auto csv = test::invoke({"query", "--db", db_path.string(), "--csv", kRunMeansSql});
  REQUIRE(csv.status == 0);
  CHECK(csv.out == read_file(test::data_dir() / "stats" / "table2_quick_run_means.csv"));

  const auto stats = test::invoke(
      {"stats", "--db", db_path.string(), "--factor", "model", "--factor", "np", "--json"});
  INFO(stats.err);
  REQUIRE(stats.status == 0);
  check_against_r(stats.out, "all");
  // The single runs are pooled with hvd np=1 in np=1: said, not hidden.
  CHECK(stats.out.find("the runs of conditions hvd, single are pooled within each level of model x "
                       "np") != std::string::npos);

  // The part crossed with np: condition hvd only, the runs left out counted.
  const auto crossed = test::invoke({"stats", "--db", db_path.string(), "--factor", "model",
                                     "--factor", "np", "--only", "condition=hvd", "--json"});
  INFO(crossed.err);
  REQUIRE(crossed.status == 0);
  check_against_r(crossed.out, "hvd");
  CHECK(crossed.out.find("only the runs with condition=hvd: 4 runs with ok epochs left out") !=
        std::string::npos);
  CHECK(crossed.out.find("are pooled") == std::string::npos);
}

TEST_CASE("stats --only: a bad filter names what exists") {
  test::TempDir dir;
  const auto db_path = dir / "table2.db";
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db_path);
  const auto stats = [&](const std::string& only) {
    return test::invoke({"stats", "--db", db_path.string(), "--factor", "np", "--only", only});
  };
  CHECK(stats("condition=hdv").err ==
        "scalebench: error: --only condition=hdv: condition has no level hdv; its levels: hvd, "
        "single\n");
  CHECK(stats("modle=vgg16")
            .err.find("has no factor modle; its factors: condition, launcher, "
                      "np, model") != std::string::npos);
  CHECK(stats("vgg16").err.find("expected FACTOR=LEVEL") != std::string::npos);
  CHECK(stats("condition=hvd").status == 0);
}

TEST_CASE("the Table 2 quick replication: run, report --by model, stats, plot --by model") {
  SCALEBENCH_SKIP_IF(why_not_runnable());
  test::TempDir dir;
  const auto db = (dir / "results.db").string();
  const auto experiment =
      (test::source_dir() / "experiments" / "horovodrunner-table2-quick.json").string();
  const auto run = test::run_binary({"run", experiment, "--db", db});
  INFO(run.out);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("12 of 12 cells ok") != std::string::npos);
  CHECK(run.out.find("model=inception_v3 np=2") != std::string::npos);

  const auto report = test::run_binary({"report", "--db", db, "--by", "model"});
  INFO(report.out);
  REQUIRE(report.status == 0);
  CHECK(report.out.find("## Experiment horovodrunner-table2-quick by model") == 0);
  CHECK(report.out.find("- Column blocks: model = vgg16, inception_v3") != std::string::npos);
  // The experiment file's "labels" name the rows.
  for (const char* row :
       {"| Single process |", "| Horovod, np = 1 |", "| Horovod, np = 2 |", "| ANOVA |"})
    CHECK(report.out.find(row) != std::string::npos);
  CHECK(report.out.find("| VGG-16 Avg. epoch time") != std::string::npos);
  CHECK(report.out.find("Two-way ANOVA of condition hvd, run mean epoch time: model * np") !=
        std::string::npos);
  for (const char* term : {"| model | 1 |", "| np | 1 |", "| model:np | 1 |", "| Residuals |"})
    CHECK(report.out.find(term) != std::string::npos);
  // The papers' unit on request, labelled as such.
  const auto epochs = test::run_binary({"report", "--db", db, "--by", "model", "--unit", "epoch"});
  REQUIRE(epochs.status == 0);
  CHECK(epochs.out.find("Two-way ANOVA of condition hvd, epoch time: model * np") !=
        std::string::npos);
  CHECK(epochs.out.find("pseudo-replication") != std::string::npos);

  const auto json = test::run_binary({"report", "--db", db, "--by", "model", "--format", "json"});
  REQUIRE(json.status == 0);
  const auto parsed = nlohmann::json::parse(json.out);
  CHECK(parsed["blocks"].size() == 2);
  CHECK(parsed["two_way"][0]["terms"].size() == 4);
  CHECK(test::run_binary({"report", "--db", db, "--by", "model", "--format", "csv"}).status == 0);

  const auto stats = test::run_binary({"stats", "--db", db, "--factor", "model", "--factor", "np"});
  INFO(stats.out);
  REQUIRE(stats.status == 0);
  CHECK(stats.out.find("model:np") != std::string::npos);

  if (!have_gnuplot()) return;
  const auto plot =
      test::run_binary({"plot", "--db", db, "--by", "model", "-o", (dir / "fig").string()});
  INFO(plot.out);
  REQUIRE(plot.status == 0);
  for (const char* extension : {".svg", ".png", ".pdf", ".dat", ".gp"})
    CHECK(fs::file_size(dir / (std::string("fig") + extension)) > 0);
  const auto data = read_file(dir / "fig.dat");
  CHECK(data.find("# index 0: vgg16") != std::string::npos);
  CHECK(data.find("# index 1: inception_v3") != std::string::npos);
}

TEST_CASE("the interconnect quick replication: transports as levels, busbw beside epoch time") {
  SCALEBENCH_SKIP_IF(why_not_runnable());
  test::TempDir dir;
  const auto db = (dir / "results.db").string();
  const auto experiment = (test::source_dir() / "experiments" / "interconnect-quick.json").string();
  const auto run = test::run_binary({"run", experiment, "--db", db});
  INFO(run.out);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("12 of 12 cells ok") != std::string::npos);

  const auto report = test::run_binary({"report", "--db", db, "--by", "transport"});
  INFO(report.out);
  REQUIRE(report.status == 0);
  CHECK(report.out.find("- Column blocks: transport = shm, tcp") != std::string::npos);
  CHECK(report.out.find("Two-way ANOVA of condition train, run mean epoch time: transport * np") !=
        std::string::npos);
  CHECK(report.out.find("| shm | allreduce np=2 | 524288 |") != std::string::npos);
  CHECK(report.out.find("| tcp | allreduce np=2 | 524288 |") != std::string::npos);

  // Every run's levels are in the database, queryable like the built-in factors.
  const auto levels = test::run_binary(
      {"query", "--db", db, "--csv",
       "SELECT transport, condition, count(*) AS runs FROM (SELECT DISTINCT run_id, transport, "
       "condition FROM epoch_levels UNION SELECT DISTINCT run_id, level_transport, condition FROM "
       "allreduce_levels) GROUP BY 1, 2 ORDER BY 1, 2"});
  INFO(levels.out);
  CHECK(levels.out ==
        "transport,condition,runs\r\nshm,allreduce,2\r\nshm,train,4\r\ntcp,allreduce,"
        "2\r\ntcp,train,4\r\n");  // RFC 4180 line ends

  if (!have_gnuplot()) return;
  const auto plot =
      test::run_binary({"plot", "--db", db, "--by", "transport", "-o", (dir / "ic").string()});
  REQUIRE(plot.status == 0);
  CHECK(fs::file_size(dir / "ic.pdf") > 0);
}

TEST_CASE("run --dry-run prints the factorial matrix with its factor columns and the seed") {
  test::TempDir dir;
  const auto db = dir / "never.db";
  const auto experiment =
      (test::source_dir() / "experiments" / "horovodrunner-table2-quick.json").string();
  const auto dry = test::invoke({"run", experiment, "--dry-run", "--db", db.string()});
  REQUIRE(dry.status == 0);
  CHECK(dry.out.find("experiment \"horovodrunner-table2-quick\": 12 runs, order randomized (seed "
                     "2020)\nrun  repetition  condition  model         np\n") == 0);
  CHECK(dry.out.find("\n12   2           ") != std::string::npos);
  CHECK(dry.out.find("--model inception_v3") != std::string::npos);
  CHECK_FALSE(fs::exists(db));
}

TEST_CASE("a randomized order without a seed gets a drawn one, stored with the instance") {
  test::TempDir dir;
  const auto experiment = dir / "r.json";
  std::ofstream(experiment) << R"({"name": "r", "order": "randomized", "repetitions": 2,
    "program": "/bin/true", "factors": {"k": ["a", "b"]},
    "conditions": [{"name": "s", "launcher": "single"}]})";
  const auto db = (dir / "r.db").string();
  const auto dry = test::invoke({"run", experiment.string(), "--dry-run"});
  CHECK(dry.out.find("drawn now, add \"seed\" to keep it") != std::string::npos);
  // Each run's environment is shown before its command (PYTHONUNBUFFERED is scalebench's own).
  CHECK(dry.out.find(": PYTHONUNBUFFERED=1 /bin/true") != std::string::npos);
  // /bin/true prints no epochs: the runs are stored as not ok, the instance with its seed.
  const auto run = test::invoke({"run", experiment.string(), "--db", db});
  CHECK(run.status == 1);
  const auto stored = test::invoke(
      {"query", "--db", db, "--csv",
       "SELECT run_order, order_seed IS NOT NULL, factors_json, cells FROM experiments"});
  CHECK(stored.out.find(
            "randomized,1,\"[{\"\"levels\"\":[\"\"a\"\",\"\"b\"\"],\"\"name\"\":\"\"k\"\"}]\",4") !=
        std::string::npos);
}
