#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "plotting/stats_report.hpp"

using namespace scalebench::plotting;

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

TEST_CASE("stats JSON: the documented keys, 17 significant digits, null for NaN") {
  const auto json = render_stats_json(small_report());
  CHECK(json ==
        "{\n"
        "  \"source\": \"d.csv\",\n"
        "  \"response\": \"y\",\n"
        "  \"factors\": [\"g\"],\n"
        "  \"ss_type\": \"II\",\n"
        "  \"unit\": null,\n"
        "  \"confidence\": 0.94999999999999996,\n"
        "  \"anova\": [\n"
        "    {\"term\": \"g\", \"df\": 1, \"ss\": 2.5, \"ms\": 2.5, \"F\": 10, \"p\": 0.10000000000000001, "
        "\"eta_sq\": 0.5, \"partial_eta_sq\": 0.5, \"omega_sq\": 0.40000000000000002},\n"
        "    {\"term\": \"Residuals\", \"df\": 4, \"ss\": 1, \"ms\": 0.25}\n"
        "  ],\n"
        "  \"tukey\": [\n"
        "    {\"factor\": \"g\", \"a\": \"b\", \"b\": \"a\", \"diff\": 1.5, \"lwr\": 0.25, \"upr\": 2.75, \"p_adj\": 0.03125}\n"
        "  ],\n"
        "  \"games_howell\": [],\n"
        "  \"tests\": [\n"
        "    {\"test\": \"Welch\", \"factor\": \"g\", \"statistic\": 3.5, \"statistic_name\": \"F\", \"df1\": 1, "
        "\"df2\": 2.5, \"p\": null}\n"
        "  ],\n"
        "  \"groups\": [\n"
        "    {\"factor\": \"g\", \"level\": \"a\", \"n\": 3, \"mean\": 1, \"sd\": 0.5, \"ci_lower\": null, \"ci_upper\": null}\n"
        "  ],\n"
        "  \"warnings\": [\"careful \\\"here\\\"\"]\n"
        "}\n");
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
