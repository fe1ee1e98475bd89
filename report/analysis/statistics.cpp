#include "report/analysis/statistics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_set>

#include "report/analysis/report.hpp"
#include "report/data/csv_table.hpp"
#include "stats/anova.hpp"
#include "stats/descriptive.hpp"
#include "stats/effect_size.hpp"
#include "stats/factorial_anova.hpp"
#include "stats/games_howell.hpp"
#include "stats/group_descriptives.hpp"
#include "stats/interaction_contrast.hpp"
#include "stats/kruskal_wallis.hpp"
#include "stats/letters.hpp"
#include "stats/levene.hpp"
#include "stats/nested_anova.hpp"
#include "stats/summary_statistics.hpp"
#include "stats/tukey.hpp"
#include "stats/welch_anova.hpp"

namespace scalebench::report {
namespace {

// Levels in order of first appearance, and the values of each.
struct Grouping {
  std::vector<std::string> levels;
  std::vector<std::vector<double>> groups;
};

// Groups in `order` (the source's: the file's, np ascending, the report's rows for "group"; so
// that stats names letters as report does), levels it lacks after them in order of appearance.
Grouping group_by(const std::vector<double>& values, const std::vector<std::string>& levels,
                  const std::vector<std::string>& order = {}) {
  Grouping grouping;
  std::map<std::string, std::size_t> index;
  for (const auto& level : order)
    if (std::find(levels.begin(), levels.end(), level) != levels.end() &&
        index.try_emplace(level, grouping.levels.size()).second) {
      grouping.levels.push_back(level);
      grouping.groups.emplace_back();
    }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto [it, inserted] = index.try_emplace(levels[i], grouping.levels.size());
    if (inserted) {
      grouping.levels.push_back(levels[i]);
      grouping.groups.emplace_back();
    }
    grouping.groups[it->second].push_back(values[i]);
  }
  return grouping;
}

const std::vector<std::string>& order_of(const Observations& data, std::size_t factor) {
  static const std::vector<std::string> none;
  return factor < data.level_order.size() ? data.level_order[factor] : none;
}

std::string ss_type_name(int type) {
  switch (type) {
    case 1:
      return "I";
    case 2:
      return "II";
    case 3:
      return "III";
  }
  throw InputError(fmt::format("--ss-type {}: expected 1, 2 or 3", type));
}

void add_tukey(StatsReport& report, const std::string& factor, const Grouping& grouping,
               double confidence) {
  if (grouping.groups.size() < 2) return;
  const std::size_t k = grouping.groups.size();
  std::vector<std::vector<bool>> significant(k, std::vector<bool>(k, false));
  for (const auto& pair : stats::tukey_hsd(grouping.groups, confidence)) {
    // R prints the pair (a, b) as "b-a" with diff = mean(b) - mean(a).
    report.tukey.push_back({factor, grouping.levels[pair.b], grouping.levels[pair.a], pair.diff,
                            pair.lower, pair.upper, pair.p_adjusted});
    significant[pair.a][pair.b] = significant[pair.b][pair.a] = pair.p_adjusted < 1 - confidence;
  }
  // The letters of the same family, on the rows add_group_rows wrote for this factor.
  std::vector<double> means;
  for (const auto& group : stats::shifted_by_first(grouping.groups))
    means.push_back(stats::mean(group));
  const auto letters = stats::compact_letters(means, significant);
  for (auto& row : report.groups)
    if (row.factor == factor)
      for (std::size_t g = 0; g < k; ++g)
        if (grouping.levels[g] == row.level) row.letters = letters[g];
}

void add_group_rows(StatsReport& report, const std::string& factor, const Grouping& grouping,
                    double confidence) {
  const auto described = stats::describe_groups(grouping.groups, confidence);
  for (std::size_t g = 0; g < grouping.levels.size(); ++g) {
    const auto& d = described[g];
    StatsGroupRow row{factor, grouping.levels[g], static_cast<double>(d.n), d.mean, d.sd, {}, {}};
    if (d.ci) row.ci_lower = d.ci->lower, row.ci_upper = d.ci->upper;
    report.groups.push_back(row);
  }
}

// The one-factor extras: tests that do not assume equal variances or normality, and the
// Games-Howell pairs for unequal variances.
void add_one_factor_robust(StatsReport& report, const std::string& factor, const Grouping& grouping,
                           double confidence) {
  const auto attempt = [&](const char* what, auto&& compute) {
    try {
      compute();
    } catch (const stats::StatsError& error) {
      report.warnings.push_back(fmt::format("{} not computed: {}", what, error.what()));
    }
  };
  attempt("Welch's ANOVA", [&] {
    const auto w = stats::welch_anova(grouping.groups, grouping.levels);
    report.tests.push_back({"Welch ANOVA", factor, w.f, "F", w.df_between, w.df_within, w.p});
  });
  attempt("Kruskal-Wallis", [&] {
    const auto kw = stats::kruskal_wallis(grouping.groups);
    report.tests.push_back({"Kruskal-Wallis", factor, kw.h, "H", kw.df, {}, kw.p});
  });
  attempt("Levene's test", [&] {
    const auto l = stats::levene_test(grouping.groups);
    report.tests.push_back({"Levene (mean)", factor, l.f, "F", l.df_between, l.df_within, l.p});
  });
  attempt("Brown-Forsythe test", [&] {
    const auto bf = stats::brown_forsythe_test(grouping.groups);
    report.tests.push_back(
        {"Brown-Forsythe (median)", factor, bf.f, "F", bf.df_between, bf.df_within, bf.p});
  });
  attempt("Games-Howell", [&] {
    for (const auto& pair : stats::games_howell(grouping.groups, confidence, grouping.levels))
      report.games_howell.push_back({factor, grouping.levels[pair.b], grouping.levels[pair.a],
                                     pair.diff, pair.lower, pair.upper, pair.p_adjusted});
  });
}

// R's TukeyHSD on a two-way model: each factor's (and each cell's) means compared with the
// model's residual mean square and d.f.
void add_model_tukey(StatsReport& report, const std::string& factor, const Grouping& grouping,
                     double ms_residual, double df_residual, double confidence) {
  std::vector<double> means, sizes;
  // Means of the shifted data (only their differences enter): exact at large offsets.
  for (const auto& group : stats::shifted_by_first(grouping.groups)) {
    means.push_back(stats::mean(group));
    sizes.push_back(static_cast<double>(group.size()));
  }
  for (const auto& pair :
       stats::tukey_hsd_from_means(means, sizes, ms_residual, df_residual, confidence))
    report.tukey.push_back({factor, grouping.levels[pair.b], grouping.levels[pair.a], pair.diff,
                            pair.lower, pair.upper, pair.p_adjusted});
}

}  // namespace

namespace {

// Epochs within runs within the levels of one factor: the mixed model of stats/nested_anova.hpp.
StatsReport analyze_nested(const Observations& data, double confidence) {
  if (data.factor_names.size() != 1)
    throw InputError(
        "--unit nested analyses one factor (epochs within runs within its levels); for two "
        "factors use --unit run, the ANOVA of the run means (the same F for a balanced design)");
  if (data.runs.size() != data.values.size())
    throw InputError("--unit nested needs the run of every observation (use --db)");
  StatsReport report;
  report.source = data.source;
  report.response = data.response;
  report.factors = data.factor_names;
  report.ss_type = "I";
  report.unit = "nested";
  report.confidence = confidence;
  report.warnings = data.warnings;
  const std::string& factor = data.factor_names[0];
  std::vector<std::string> levels;
  std::vector<std::map<std::int64_t, std::size_t>> run_index;
  stats::NestedData nested;
  for (const auto& level : order_of(data, 0))  // the source's order first, as group_by
    if (std::find(data.levels[0].begin(), data.levels[0].end(), level) != data.levels[0].end() &&
        std::find(levels.begin(), levels.end(), level) == levels.end()) {
      levels.push_back(level);
      run_index.emplace_back();
      nested.emplace_back();
    }
  for (std::size_t i = 0; i < data.values.size(); ++i) {
    auto level = std::find(levels.begin(), levels.end(), data.levels[0][i]);
    if (level == levels.end()) {
      levels.push_back(data.levels[0][i]);
      run_index.emplace_back();
      nested.emplace_back();
      level = levels.end() - 1;
    }
    const auto g = static_cast<std::size_t>(level - levels.begin());
    const auto [it, inserted] = run_index[g].try_emplace(data.runs[i], nested[g].size());
    if (inserted) nested[g].emplace_back();
    nested[g][it->second].push_back(data.values[i]);
  }
  if (levels.size() < 2)
    throw InputError(
        fmt::format("--factor {} has one level ({}): nothing to compare", factor, levels.front()));
  const auto fit = [&] {
    try {
      return stats::nested_anova(nested);
    } catch (const stats::StatsError& error) {
      throw InputError(fmt::format("--unit nested: {}", error.what()));
    }
  }();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  report.anova.push_back({factor, *fit.df_num, nan, nan, fit.f, fit.p, {}, {}, {}});
  report.anova.push_back(
      {"Residuals (runs, Satterthwaite)", *fit.df_den, nan, nan, {}, {}, {}, {}, {}});
  report.variance_components = {fit.run_variance, fit.epoch_variance};
  if (fit.singular)
    report.warnings.push_back(
        "the run-to-run variance is estimated as 0 (a singular fit): the runs of a level vary no "
        "more than their epochs do");
  const std::size_t k = levels.size();
  for (std::size_t g = 0; g < k; ++g) {
    std::vector<double> run_means;
    for (const auto& run : nested[g]) run_means.push_back(stats::mean(run));
    const auto& e = fit.mean_estimates[g];
    const double t = stats::students_t_quantile((1 + confidence) / 2, e.df);
    StatsGroupRow row{factor,
                      levels[g],
                      static_cast<double>(nested[g].size()),
                      fit.means[g],
                      stats::sample_sd(run_means),
                      e.estimate - t * e.se,
                      e.estimate + t * e.se};
    report.groups.push_back(row);
  }
  std::vector<std::vector<bool>> significant(k, std::vector<bool>(k, false));
  for (const auto& pair : stats::nested_tukey(fit, confidence)) {
    report.tukey.push_back({factor, levels[pair.b], levels[pair.a], pair.diff, pair.lower,
                            pair.upper, pair.p_adjusted});
    significant[pair.a][pair.b] = significant[pair.b][pair.a] = pair.p_adjusted < 1 - confidence;
  }
  std::vector<double> centred;
  for (const double m : fit.means) centred.push_back(m - fit.means.front());
  const auto letters = stats::compact_letters(centred, significant);
  for (std::size_t g = 0; g < k; ++g) report.groups[g].letters = letters[g];
  report.warnings.push_back(
      "n is the number of runs; Tukey pairs use each pair's Satterthwaite d.f. (as emmeans); "
      "Welch, Kruskal-Wallis, Levene and Games-Howell are for one value per run: --unit run");
  return report;
}

// All pairs of k groups are k(k-1)/2 rows of Tukey and Games-Howell and a k x k letter display:
// 200 000 groups exhausted memory. Refused past kMaxCompareGroups, before any work, with the limit.
void check_group_count(std::size_t groups, const std::string& what) {
  if (groups <= kMaxCompareGroups) return;
  throw InputError(fmt::format(
      "{}: {} groups, more than the {} whose all-pairs comparisons stats computes ({} pairs "
      "here); analyse fewer at a time (with --db: --only FACTOR=LEVEL)",
      what, groups, kMaxCompareGroups,
      static_cast<double>(groups) * static_cast<double>(groups - 1) / 2));
}

}  // namespace

StatsReport analyze_observations(const Observations& data, int ss_type, double confidence,
                                 bool interaction) {
  for (std::size_t f = 0; f < data.levels.size() && f < data.factor_names.size(); ++f) {
    std::unordered_set<std::string_view> distinct(data.levels[f].begin(), data.levels[f].end());
    check_group_count(distinct.size(), "--factor " + data.factor_names[f]);
  }
  if (data.levels.size() == 2) {
    std::unordered_set<std::string> cells;
    for (std::size_t i = 0; i < data.values.size() && i < data.levels[0].size(); ++i)
      cells.insert(data.levels[0][i] + '\x1f' + data.levels[1][i]);
    check_group_count(cells.size(), "the cells of the two factors");
  }
  if (data.unit && *data.unit == "nested") return analyze_nested(data, confidence);
  if (data.factor_names.empty() || data.factor_names.size() > 2)
    throw InputError(
        fmt::format("{} factors given: expected one or two --factor", data.factor_names.size()));
  if (!interaction && data.factor_names.size() != 2)
    throw InputError("--no-interaction needs two --factor (it drops their interaction term)");
  StatsReport report;
  report.source = data.source;
  report.response = data.response;
  report.factors = data.factor_names;
  report.ss_type = ss_type_name(ss_type);
  report.unit = data.unit;
  report.confidence = confidence;
  report.warnings = data.warnings;

  if (data.factor_names.size() == 1) {
    // One factor: the direct one-way sums (every SS type agrees) are a few ulps closer than QR.
    const auto grouping = group_by(data.values, data.levels[0], order_of(data, 0));
    const auto anova = stats::one_way_anova(grouping.groups);
    const auto effect = stats::effect_sizes(anova);
    report.anova.push_back({data.factor_names[0], anova.df_between, anova.ss_between,
                            anova.ms_between, anova.f, anova.p, effect.eta_sq,
                            effect.partial_eta_sq, effect.omega_sq});
    report.anova.push_back(
        {"Residuals", anova.df_within, anova.ss_within, anova.ms_within, {}, {}, {}, {}, {}});
    add_group_rows(report, data.factor_names[0], grouping, confidence);
    add_tukey(report, data.factor_names[0], grouping, confidence);
    add_one_factor_robust(report, data.factor_names[0], grouping, confidence);
    return report;
  }
  const auto anova = [&] {
    try {
      return stats::factorial_anova(data.values, data.levels, data.factor_names,
                                    static_cast<stats::SsType>(ss_type), interaction);
    } catch (const stats::EmptyCellError& error) {
      throw InputError(fmt::format(
          "{}; --no-interaction fits the additive model {} + {} instead, or (with --db) --only "
          "FACTOR=LEVEL analyses a crossed part, e.g. --only condition=mpirun (docs/statistics.md)",
          error.what(), data.factor_names[0], data.factor_names[1]));
    }
  }();
  for (const auto& term : anova.terms) {
    if (term.term == "Residuals") {
      report.anova.push_back({term.term, term.df, term.ss, term.ms, {}, {}, {}, {}, {}});
    } else {
      report.anova.push_back({term.term, term.df, term.ss, term.ms, term.f, term.p, term.eta_sq,
                              term.partial_eta_sq, term.omega_sq});
    }
  }
  const auto& residual = anova.terms.back();
  std::vector<std::string> cells;
  for (std::size_t i = 0; i < data.values.size(); ++i)
    cells.push_back(data.levels[0][i] + ":" + data.levels[1][i]);
  const std::string interaction_term = data.factor_names[0] + ":" + data.factor_names[1];
  // Without the interaction the design may have an empty or thin cell (single has no np=2): a
  // factor's observed level means then carry the other factor's effect, and Tukey pairs on them
  // would report a difference the ANOVA does not see. They are left out unless every cell holds
  // the same number of observations.
  const Grouping by_factor[2] = {group_by(data.values, data.levels[0], order_of(data, 0)),
                                 group_by(data.values, data.levels[1], order_of(data, 1))};
  const auto by_cell = group_by(data.values, cells);
  bool balanced = by_cell.levels.size() == by_factor[0].levels.size() * by_factor[1].levels.size();
  for (const auto& group : by_cell.groups)
    balanced = balanced && group.size() == by_cell.groups.front().size();
  const bool tukey = interaction || balanced;
  for (std::size_t f = 0; f < 2; ++f) {
    add_group_rows(report, data.factor_names[f], by_factor[f], confidence);
    if (tukey)
      add_model_tukey(report, data.factor_names[f], by_factor[f], residual.ms, residual.df,
                      confidence);
  }
  if (!tukey) {
    report.warnings.push_back(
        "no Tukey pairs: the cells are empty or unequal, so each factor's observed level means "
        "carry the other factor's effect; read the F tests of the additive model");
  }
  if (interaction) {
    add_model_tukey(report, interaction_term, by_cell, residual.ms, residual.df, confidence);
  } else {
    report.warnings.push_back(fmt::format(
        "additive model {} + {}: no {} term, so each factor's effect is assumed the same at every "
        "level of the other (an interaction would be absorbed into the residuals)",
        data.factor_names[0], data.factor_names[1], interaction_term));
  }
  // Only an unbalanced design makes observed and model-projected means differ: a balanced one
  // gets R's TukeyHSD figures and no warning about designs it is not.
  if (tukey && !balanced)
    report.warnings.push_back(
        "Tukey comparisons for two factors use each factor's observed level means with the model's "
        "residual mean square; for this unbalanced design (cells of unequal size) R's TukeyHSD "
        "uses model-projected means instead");
  return report;
}

StatsReport analyze_summary_file(const std::string& path, double confidence) {
  const auto table = read_csv(path);
  const auto names = table.column("group");
  const auto n = table.numeric_column("n");
  const auto means = table.numeric_column("mean");
  // A group of one has no sd: its cell may be empty, NA or nan (R's sd() of one value is NA).
  const auto sds = table.optional_numeric_column("sd");
  check_group_count(names.size(), path);
  std::vector<stats::GroupSummary> groups;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!sds[i] && n[i] != 1)
      throw InputError(
          fmt::format("{}:{}: group {}: n = {} needs an sd (only a group of one may "
                      "leave it empty or NA)",
                      path, table.row_lines[i], names[i], n[i]));
    groups.push_back(
        {names[i], n[i], means[i], sds[i].value_or(std::numeric_limits<double>::quiet_NaN())});
  }

  StatsReport report;
  report.source = path;
  report.response = "mean (from summary statistics)";
  report.factors = {"group"};
  report.ss_type = "I";  // one factor: every type gives the same sums of squares
  report.confidence = confidence;
  const auto anova = stats::one_way_anova_from_summary(groups);
  const auto effect = stats::effect_sizes(anova);
  report.anova.push_back({"group", anova.df_between, anova.ss_between, anova.ms_between, anova.f,
                          anova.p, effect.eta_sq, effect.partial_eta_sq, effect.omega_sq});
  report.anova.push_back(
      {"Residuals", anova.df_within, anova.ss_within, anova.ms_within, {}, {}, {}, {}, {}});
  for (const auto& g : groups)
    report.groups.push_back({"group", g.name, g.n, g.mean, g.sd, {}, {}});
  for (const auto& pair : stats::tukey_hsd_from_summary(groups, confidence))
    report.tukey.push_back({"group", names[pair.b], names[pair.a], pair.diff, pair.lower,
                            pair.upper, pair.p_adjusted});
  // Welch needs every group's variance; a group of one or with sd 0 has none to weight by, while
  // the ANOVA and Tukey above (pooled variance) are still defined, as in R.
  try {
    const auto welch = stats::welch_anova_from_summary(groups);
    report.tests.push_back(
        {"Welch ANOVA", "group", welch.f, "F", welch.df_between, welch.df_within, welch.p});
  } catch (const stats::StatsError& error) {
    report.warnings.push_back(fmt::format("Welch's ANOVA not computed: {}", error.what()));
  }
  report.warnings.push_back(
      "summary statistics: the analysis assumes the sd column is the sample SD (n - 1) of each "
      "group");
  return report;
}

void keep_pairs_against(StatsReport& report, const std::string& base) {
  const auto filter = [&](std::vector<StatsPairRow>& pairs) {
    std::vector<StatsPairRow> kept;
    for (auto pair : pairs) {
      if (pair.a == base) {  // a-b with a the base: flip to other-base
        std::swap(pair.a, pair.b);
        pair.diff = -pair.diff;
        const double lower = -pair.upr;
        pair.upr = -pair.lwr;
        pair.lwr = lower;
      }
      if (pair.b == base) kept.push_back(pair);
    }
    pairs = std::move(kept);
  };
  filter(report.tukey);
  filter(report.games_howell);
  if (report.tukey.empty())
    throw InputError(fmt::format("--base {}: no such level among the compared groups", base));
  report.warnings.push_back(fmt::format(
      "pairs against {} only; their p-values are those of the all-pairs Tukey family (conservative "
      "for comparisons against one base; Dunnett's test would be less so)",
      base));
}

ContrastReport interaction_contrast_of(const Observations& data, double confidence) {
  if (data.factor_names.size() != 2)
    throw InputError(fmt::format(
        "--contrast needs two factors with two levels each (e.g. --factor framework --factor "
        "np), got {} factors",
        data.factor_names.size()));
  ContrastReport report;
  report.factor_a = data.factor_names[0];
  report.factor_b = data.factor_names[1];
  report.confidence = confidence;
  report.log_response = data.response.rfind("log(", 0) == 0;
  std::array<std::array<std::string, 2>*, 2> targets = {&report.levels_a, &report.levels_b};
  for (std::size_t f = 0; f < 2; ++f) {
    std::vector<std::string> levels;
    if (f < data.level_order.size())
      for (const auto& level : data.level_order[f])
        if (std::find(data.levels[f].begin(), data.levels[f].end(), level) != data.levels[f].end())
          levels.push_back(level);
    for (const auto& level : data.levels[f])
      if (std::find(levels.begin(), levels.end(), level) == levels.end()) levels.push_back(level);
    if (levels.size() != 2)
      throw InputError(fmt::format("--contrast: factor {} has {} levels ({}); it needs two",
                                   data.factor_names[f], levels.size(), fmt::join(levels, ", ")));
    *targets[f] = {levels[0], levels[1]};
  }
  std::array<std::array<std::vector<double>, 2>, 2> cells;
  for (std::size_t i = 0; i < data.values.size(); ++i) {
    const auto a = data.levels[0][i] == report.levels_a[0] ? 0 : 1;
    const auto b = data.levels[1][i] == report.levels_b[0] ? 0 : 1;
    cells[a][b].push_back(data.values[i]);
  }
  try {
    report.contrast = stats::interaction_contrast(cells, confidence);
  } catch (const stats::StatsError& error) {
    throw InputError(fmt::format("--contrast: {}", error.what()));
  }
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      report.n[a][b] = cells[a][b].size();
      report.means[a][b] = stats::mean(cells[a][b]);
    }
  return report;
}

}  // namespace scalebench::report
