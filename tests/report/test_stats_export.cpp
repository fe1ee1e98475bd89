#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "report/export/stats_export.hpp"

using namespace scalebench::report;

namespace {

StatsReport small_report() {
  StatsReport report;
  report.source = "d.csv";
  report.response = "y";
  report.factors = {"g"};
  report.ss_type = "II";
  report.anova = {{"g", 1, 2.5, 2.5, 10.0, 0.1, 0.5, 0.5, 0.4},
                  {"Residuals", 4, 1, 0.25, {}, {}, {}, {}, {}}};
  report.tukey = {{"g", "b", "a", 1.5, 0.25, 2.75, 0.03125}};
  report.groups = {{"g", "a", 3, 1, 0.5, {}, {}}};
  report.tests = {{"Welch", "g", 3.5, "F", 1, 2.5, std::numeric_limits<double>::quiet_NaN()}};
  report.warnings = {"careful \"here\""};
  return report;
}

}  // namespace

TEST_CASE(
    "stats JSON: the documented keys in order, numbers that read back exactly, null for NaN") {
  const auto json = render_stats_json(small_report());
  CHECK(json ==
        R"({
)"
        R"(  "source": "d.csv",
)"
        R"(  "response": "y",
)"
        R"(  "factors": [
)"
        R"(    "g"
)"
        R"(  ],
)"
        R"(  "ss_type": "II",
)"
        R"(  "unit": null,
)"
        R"(  "confidence": 0.95,
)"
        R"(  "anova": [
)"
        R"(    {
)"
        R"(      "term": "g",
)"
        R"(      "df": 1.0,
)"
        R"(      "ss": 2.5,
)"
        R"(      "ms": 2.5,
)"
        R"(      "F": 10.0,
)"
        R"(      "p": 0.1,
)"
        R"(      "eta_sq": 0.5,
)"
        R"(      "partial_eta_sq": 0.5,
)"
        R"(      "omega_sq": 0.4
)"
        R"(    },
)"
        R"(    {
)"
        R"(      "term": "Residuals",
)"
        R"(      "df": 4.0,
)"
        R"(      "ss": 1.0,
)"
        R"(      "ms": 0.25
)"
        R"(    }
)"
        R"(  ],
)"
        R"(  "tukey": [
)"
        R"(    {
)"
        R"(      "factor": "g",
)"
        R"(      "a": "b",
)"
        R"(      "b": "a",
)"
        R"(      "diff": 1.5,
)"
        R"(      "lwr": 0.25,
)"
        R"(      "upr": 2.75,
)"
        R"(      "p_adj": 0.03125
)"
        R"(    }
)"
        R"(  ],
)"
        R"(  "games_howell": [],
)"
        R"(  "tests": [
)"
        R"(    {
)"
        R"(      "test": "Welch",
)"
        R"(      "factor": "g",
)"
        R"(      "statistic": 3.5,
)"
        R"(      "statistic_name": "F",
)"
        R"(      "df1": 1.0,
)"
        R"(      "df2": 2.5,
)"
        R"(      "p": null
)"
        R"(    }
)"
        R"(  ],
)"
        R"(  "groups": [
)"
        R"(    {
)"
        R"(      "factor": "g",
)"
        R"(      "level": "a",
)"
        R"(      "n": 3.0,
)"
        R"(      "mean": 1.0,
)"
        R"(      "sd": 0.5,
)"
        R"(      "ci_lower": null,
)"
        R"(      "ci_upper": null,
)"
        R"(      "letters": null
)"
        R"(    }
)"
        R"(  ],
)"
        R"(  "warnings": [
)"
        R"(    "careful \"here\""
)"
        R"(  ],
)"
        R"(  "variance_components": null
)"
        R"(}
)");
}

TEST_CASE("stats JSON: every double reads back bit for bit: invalid UTF-8 becomes U+FFFD") {
  StatsReport report = small_report();
  report.anova[0].ss = 0.1 + 0.2;  // 0.30000000000000004: shortest form, not 0.3
  report.anova[0].f = 1.0 / 3.0;
  report.groups[0].level = "caf\xE9";  // Latin-1 from a CSV file
  const auto document = nlohmann::json::parse(render_stats_json(report));
  CHECK(document["anova"][0]["ss"].get<double>() == 0.1 + 0.2);
  CHECK(document["anova"][0]["F"].get<double>() == 1.0 / 3.0);
  CHECK(document["groups"][0]["level"] == "caf\xEF\xBF\xBD");
}

TEST_CASE("stats text: says what was tested, with aligned tables") {
  const auto text = render_stats_text(small_report());
  CHECK(text.find("Analysis of variance (type II sums of squares)\n"
                  "term       Df  Sum Sq  Mean Sq  F value  Pr(>F)  eta2  partial eta2  omega2\n"
                  "g           1     2.5      2.5       10     0.1   0.5           0.5     0.4\n"
                  "Residuals   4       1     0.25\n") != std::string::npos);
  CHECK(text.find("factor  comparison  diff   lwr   upr    p adj\n"
                  "g              b-a   1.5  0.25  2.75  0.03125\n") != std::string::npos);
  CHECK(text.find("warning: careful \"here\"") != std::string::npos);
}
