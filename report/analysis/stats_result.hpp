// The result of `scalebench stats`: ANOVA table, post-hoc pairs, group descriptives and the
// assumption tests; rendered by report/export/stats_export.hpp as text for people or as JSON (a
// stable contract, docs/statistics.md).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/analysis/anova_row.hpp"

namespace scalebench::report {

// One comparison; diff = mean(a) - mean(b), as R prints its row "a-b".
struct StatsPairRow {
  std::string factor;
  std::string a;
  std::string b;
  double diff = 0;
  double lwr = 0;
  double upr = 0;
  double p_adj = 1;
};

struct StatsGroupRow {
  std::string factor;
  std::string level;
  double n = 0;
  double mean = 0;
  std::optional<double> sd;
  std::optional<double> ci_lower;  // t-based confidence interval for the mean
  std::optional<double> ci_upper;
  // One factor: the compact letter display of the Tukey family (stats::compact_letters), groups
  // sharing a letter do not differ at 1 - confidence.
  std::optional<std::string> letters = std::nullopt;
};

// A single-number test: Welch's ANOVA, Kruskal-Wallis, Levene, Brown-Forsythe.
struct StatsTestRow {
  std::string test;
  std::string factor;
  double statistic = 0;
  std::string statistic_name;  // "F", "H"
  double df1 = 0;
  std::optional<double> df2;
  double p = 1;
};

struct StatsReport {
  std::string source;  // what was analysed, for the heading
  std::string response;
  std::vector<std::string> factors;
  std::string ss_type;              // "I", "II" or "III"
  std::optional<std::string> unit;  // "epoch" or "run" for data from the results database
  double confidence = 0.95;
  std::vector<AnovaRow> anova;
  std::vector<StatsPairRow> tukey;
  std::vector<StatsPairRow> games_howell;
  std::vector<StatsGroupRow> groups;
  std::vector<StatsTestRow> tests;
  std::vector<std::string> warnings;
  // Unit nested: the REML estimates of the run-to-run and the epoch-to-epoch variance.
  std::optional<std::pair<double, double>> variance_components = std::nullopt;
};

}  // namespace scalebench::report
