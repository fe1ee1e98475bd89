// `scalebench stats` end to end on R's warpbreaks, against R 4.2's aov and TukeyHSD
// (values printed by scripts/reference/stats_reference.R and R's own printout).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.hpp"
#include "test_support.hpp"

using namespace scalebench;

namespace {
const std::string kWarpbreaks = (test::data_dir() / "cli" / "warpbreaks.csv").string();
}

TEST_CASE("stats CLI: JSON contract, diff = mean(a) - mean(b), numbers that read back exactly") {
  std::ostringstream out, err;
  REQUIRE(cli::run_cli({"stats", "--csv", kWarpbreaks, "--response", "breaks", "--factor",
                        "tension", "--json"},
                       out, err) == 0);
  const auto json = nlohmann::json::parse(out.str());
  const auto& tension = json["anova"][0];
  CHECK(tension["term"] == "tension");
  CHECK(tension["df"].get<double>() == 2);
  CHECK(tension["ss"].get<double>() == doctest::Approx(2034.25925925926).epsilon(1e-13));
  // The same double the old %.17g writer printed as 7.2061138808711682: nothing is rounded.
  CHECK(tension["F"].get<double>() == 7.2061138808711682);
  CHECK(json["anova"][1]["term"] == "Residuals");
  CHECK(json["anova"][1]["df"].get<double>() == 51);
  CHECK(json["anova"][1]["ss"].get<double>() == doctest::Approx(7198.5555555555).epsilon(1e-13));
  const auto& pair = json["tukey"][0];
  CHECK(pair["factor"] == "tension");
  CHECK(pair["a"] == "M");
  CHECK(pair["b"] == "L");
  CHECK(pair["diff"].get<double>() == doctest::Approx(-10.0).epsilon(1e-13));
}

TEST_CASE("stats CLI: bad input gets one clear line") {
  std::ostringstream out, err;
  CHECK(cli::run_cli({"stats", "--csv", kWarpbreaks, "--response", "breaks", "--factor", "tensoin"},
                     out, err) == 1);
  CHECK(
      err.str() ==
      "scalebench: error: " + kWarpbreaks +
          ": no column \"tensoin\" (did you mean \"tension\"?); columns: breaks, wool, tension\n");
  std::ostringstream out2, err2;
  CHECK(cli::run_cli({"stats", "--response", "breaks"}, out2, err2) == 1);
  CHECK(err2.str() ==
        "scalebench: error: give exactly one of --csv FILE, --summary FILE, --db PATH\n");
  std::ostringstream out3, err3;
  CHECK(cli::run_cli({"stats", "--csv", kWarpbreaks, "--response", "wool", "--factor", "tension"},
                     out3, err3) == 1);
  CHECK(err3.str().find("column \"response\"") == std::string::npos);
  CHECK(err3.str().find(":2: column \"wool\": expected a finite number, got \"A\"") !=
        std::string::npos);
}

TEST_CASE("stats CLI: --no-interaction fits the additive model") {
  std::ostringstream out, err;
  REQUIRE(cli::run_cli({"stats", "--csv", kWarpbreaks, "--response", "breaks", "--factor", "wool",
                        "--factor", "tension", "--no-interaction", "--json"},
                       out, err) == 0);
  const auto json = nlohmann::json::parse(out.str());
  REQUIRE(json["anova"].size() == 3);
  CHECK(json["anova"][0]["term"] == "wool");
  CHECK(json["anova"][1]["term"] == "tension");
  CHECK(json["anova"][2]["term"] == "Residuals");
  std::ostringstream out2, err2;
  CHECK(cli::run_cli({"stats", "--csv", kWarpbreaks, "--response", "breaks", "--factor", "wool",
                      "--no-interaction"},
                     out2, err2) == 1);
  CHECK(err2.str() ==
        "scalebench: error: --no-interaction needs two --factor (it drops their "
        "interaction term)\n");
}

TEST_CASE("stats CLI: 200 000 groups are refused with the limit, not a bad_alloc") {
  // All pairs of 200 000 groups (2e10 Tukey rows) exhausted memory after seconds of work.
  test::TempDir dir;
  const auto csv = dir / "many.csv";
  {
    std::ofstream file(csv);
    file << "group,value\n";
    for (int g = 0; g < 200'000; ++g) file << 'g' << g << ',' << g % 7 << "\ng" << g << ",1\n";
  }
  std::ostringstream out, err;
  CHECK(cli::run_cli({"stats", "--csv", csv.string(), "--response", "value", "--factor", "group"},
                     out, err) == 1);
  CHECK(err.str().find("--factor group: 200000 groups, more than the 1000 whose all-pairs "
                       "comparisons stats computes") != std::string::npos);
  // Two factors: their cells count too; and a summary file's groups.
  const auto summary = dir / "summary.csv";
  {
    std::ofstream file(summary);
    file << "group,n,mean,sd\n";
    for (int g = 0; g < 1001; ++g) file << 'g' << g << ",3,1.5,0.5\n";
  }
  std::ostringstream out2, err2;
  CHECK(cli::run_cli({"stats", "--summary", summary.string()}, out2, err2) == 1);
  CHECK(err2.str().find("1001 groups, more than the 1000") != std::string::npos);
}
