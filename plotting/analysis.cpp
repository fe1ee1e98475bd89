#include "plotting/analysis.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "db/database.hpp"
#include "plotting/csv_table.hpp"
#include "plotting/report.hpp"
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

namespace scalebench::plotting {
namespace {

// Levels in order of first appearance, and the values of each.
struct Grouping {
  std::vector<std::string> levels;
  std::vector<std::vector<double>> groups;
};

Grouping group_by(const std::vector<double>& values, const std::vector<std::string>& levels) {
  Grouping grouping;
  std::map<std::string, std::size_t> index;
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

Observations observations_from_csv(const std::string& path, const std::string& response,
                                   const std::vector<std::string>& factors) {
  const auto table = read_csv(path);
  Observations data;
  data.source = path;
  data.response = response;
  data.values = table.numeric_column(response);
  for (const auto& factor : factors) {
    data.factor_names.push_back(factor);
    data.levels.push_back(table.column(factor));
  }
  return data;
}

Observations observations_from_database(const std::string& path, const InstanceQuery& query,
                                        const std::vector<std::string>& factors,
                                        const std::string& unit,
                                        const std::vector<std::string>& only,
                                        const std::string& response) {
  if (unit != "run" && unit != "epoch" && unit != "nested")
    throw InputError(fmt::format("--unit {}: expected run, nested or epoch", unit));
  const bool log_rate = response == "log_images_per_second";
  if (!log_rate && response != "epoch_seconds")
    throw InputError(fmt::format(
        "--response {}: with --db expected epoch_seconds or log_images_per_second", response));
  if (log_rate && unit != "run")
    throw InputError("--response log_images_per_second is a run's rate: use it with --unit run");
  const auto database = db::Database::open(path, db::OpenMode::ReadOnly);
  auto selection = select_instances(database, query);
  const auto& name = selection.experiment;
  auto samples = epoch_samples_after_warmup(database, selection, query);
  if (samples.empty())
    throw InputError(fmt::format("{}: no finished epochs for experiment \"{}\" ({})", path, name,
                                 fmt::join(selection.notes, " ")));

  // The built-in factors, then the experiment file's own (stored in run_factors).
  std::vector<std::string> known = {"group", "condition", "launcher", "np"};
  for (const auto& s : samples)
    for (const auto& [factor, level] : s.factors)
      if (std::find(known.begin(), known.end(), factor) == known.end()) known.push_back(factor);
  const std::vector<std::string> chosen =
      factors.empty() ? std::vector<std::string>{"group"} : factors;
  for (const auto& factor : chosen)
    if (std::find(known.begin(), known.end(), factor) == known.end())
      throw InputError(fmt::format(
          "--factor {}: experiment \"{}\" has no such factor; with --db a factor is one of {} "
          "(group is condition, factor levels and np, as in the report)",
          factor, name, fmt::join(known, ", ")));
  const auto level_of = [&](const db::EpochSample& s, const std::string& factor) -> std::string {
    if (factor == "condition") return s.condition;
    if (factor == "launcher") return s.launcher;
    if (factor == "np") return std::to_string(s.np);
    if (factor == "group") return group_label(s.condition, s.launcher, s.np, s.factors);
    for (const auto& [name, level] : s.factors)
      if (name == factor) return level;
    throw InputError(fmt::format(
        "--factor {}: run {} has no level of it (an instance without this factor was pooled?)",
        factor, s.run_id));
  };

  // --only FACTOR=LEVEL: the crossed part of a design, with the runs left out counted.
  std::set<std::int64_t> all_runs;
  for (const auto& s : samples) all_runs.insert(s.run_id);
  std::string only_text;
  for (const auto& filter : only) {
    const auto equals = filter.find('=');
    if (equals == std::string::npos || equals == 0)
      throw InputError(
          fmt::format("--only {}: expected FACTOR=LEVEL, e.g. condition=mpirun", filter));
    const auto factor = filter.substr(0, equals);
    const auto level = filter.substr(equals + 1);
    if (std::find(known.begin(), known.end(), factor) == known.end() || factor == "group")
      throw InputError(fmt::format("--only {}: experiment \"{}\" has no factor {}; its factors: {}",
                                   filter, name, factor,
                                   fmt::join(known.begin() + 1, known.end(), ", ")));
    std::vector<std::string> levels;
    for (const auto& s : samples) {
      const auto value = level_of(s, factor);
      if (std::find(levels.begin(), levels.end(), value) == levels.end()) levels.push_back(value);
    }
    if (std::find(levels.begin(), levels.end(), level) == levels.end())
      throw InputError(fmt::format("--only {}: {} has no level {}; its levels: {}", filter, factor,
                                   level, fmt::join(levels, ", ")));
    std::erase_if(samples, [&](const db::EpochSample& s) { return level_of(s, factor) != level; });
    only_text += (only_text.empty() ? "" : ", ") + filter;
  }
  std::set<std::int64_t> kept_runs;
  for (const auto& s : samples) kept_runs.insert(s.run_id);
  const std::size_t runs_left_out = all_runs.size() - kept_runs.size();

  Observations data;
  data.source = fmt::format("{} experiment {} ({})", path, name,
                            selection.ids.size() == 1
                                ? fmt::format("instance {}", selection.ids[0])
                                : fmt::format("instances {}", fmt::join(selection.ids, ", ")));
  for (const auto& note : failure_notes(database.runs_of_instances(selection.ids)))
    data.warnings.push_back(note);
  for (const auto& note : selection.notes)
    if (note.starts_with("Warm-up left out")) data.warnings.push_back(note);
  if (!only.empty())
    data.warnings.push_back(fmt::format("only the runs with {}: {} runs with ok epochs left out",
                                        only_text, runs_left_out));
  // Conditions pooled within a level (single and mpirun np=1 in np=1) are said, not hidden.
  if (std::find(chosen.begin(), chosen.end(), "condition") == chosen.end() &&
      std::find(chosen.begin(), chosen.end(), "group") == chosen.end()) {
    std::vector<std::string> conditions;
    for (const auto& s : samples)
      if (std::find(conditions.begin(), conditions.end(), s.condition) == conditions.end())
        conditions.push_back(s.condition);
    if (conditions.size() > 1)
      data.warnings.push_back(fmt::format(
          "the runs of conditions {} are pooled within each level of {}; add --factor condition "
          "to separate them",
          fmt::join(conditions, ", "), fmt::join(chosen, " x ")));
  }
  data.response = log_rate           ? "log(images/s) of a run"
                  : unit == "run"    ? "mean epoch seconds of a run"
                  : unit == "nested" ? "epoch seconds, within runs"
                                     : "epoch seconds";
  data.unit = unit;
  data.factor_names = chosen;
  data.levels.resize(chosen.size());
  // The file's order of conditions and factor levels, np ascending.
  if (const auto record = database.experiment(selection.ids.front())) {
    std::vector<std::pair<std::string, std::vector<std::string>>> file_order;
    try {
      const auto spec = nlohmann::json::parse(record->spec_json);
      std::vector<std::string> conditions;
      if (spec.contains("conditions") && spec["conditions"].is_array())
        for (const auto& c : spec["conditions"])
          if (c.contains("name") && c["name"].is_string())
            conditions.push_back(c["name"].get<std::string>());
      file_order.emplace_back("condition", conditions);
      for (const auto& factor : nlohmann::json::parse(record->factors_json)) {
        std::vector<std::string> levels;
        for (const auto& level : factor.at("levels")) levels.push_back(level.get<std::string>());
        file_order.emplace_back(factor.at("name").get<std::string>(), levels);
      }
    } catch (const nlohmann::json::exception&) {
      file_order.clear();  // an unreadable record only costs the order
    }
    for (const auto& factor : chosen) {
      std::vector<std::string> order;
      if (factor == "np") {
        std::set<int> nps;
        for (const auto& s : samples) nps.insert(s.np);
        for (int np : nps) order.push_back(std::to_string(np));
      }
      for (const auto& [name, levels] : file_order)
        if (name == factor) order = levels;
      data.level_order.push_back(order);
    }
  }
  if (unit == "epoch" || unit == "nested") {
    for (const auto& s : samples) {
      data.values.push_back(s.duration_seconds);
      data.runs.push_back(s.run_id);
      for (std::size_t f = 0; f < chosen.size(); ++f)
        data.levels[f].push_back(level_of(s, chosen[f]));
    }
    if (unit == "nested") return data;
    data.warnings.push_back(
        "the epochs of one run are used as independent observations (as the reference study did); "
        "they are not independent (pseudo-replication), so the degrees of freedom are inflated and "
        "the p-values too small. `--unit run` analyses one mean per run instead.");
    return data;
  }
  // One observation per run: the mean of its epochs (samples come ordered by run, then epoch).
  std::size_t begin = 0;
  while (begin < samples.size()) {
    std::size_t end = begin;
    double sum = 0;
    while (end < samples.size() && samples[end].run_id == samples[begin].run_id)
      sum += samples[end++].duration_seconds;
    if (log_rate) {
      const auto& first = samples[begin];
      if (!first.train_images || sum <= 0)
        throw InputError(fmt::format(
            "--response log_images_per_second: run {} has no images per epoch (a program "
            "without a header needs \"train_images\" in the experiment file)",
            first.run_id));
      data.values.push_back(std::log(static_cast<double>(*first.train_images) *
                                     static_cast<double>(end - begin) / sum));
    } else {
      data.values.push_back(sum / static_cast<double>(end - begin));
    }
    for (std::size_t f = 0; f < chosen.size(); ++f)
      data.levels[f].push_back(level_of(samples[begin], chosen[f]));
    begin = end;
  }
  return data;
}

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

}  // namespace

StatsReport analyze_observations(const Observations& data, int ss_type, double confidence,
                                 bool interaction) {
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
    const auto grouping = group_by(data.values, data.levels[0]);
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
  const Grouping by_factor[2] = {group_by(data.values, data.levels[0]),
                                 group_by(data.values, data.levels[1])};
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

std::string render_contrast_text(const ContrastReport& r) {
  const auto& c = r.contrast;
  std::string out =
      fmt::format("\nInteraction contrast {} x {}: ({} {} - {}) - ({} {} - {}) of the cell means\n",
                  r.factor_a, r.factor_b, r.levels_a[1], r.levels_b[1], r.levels_b[0],
                  r.levels_a[0], r.levels_b[1], r.levels_b[0]);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      out += fmt::format("  {}={} {}={}: n={} mean={:.6g}\n", r.factor_a, r.levels_a[a], r.factor_b,
                         r.levels_b[b], r.n[a][b], r.means[a][b]);
  out += fmt::format(
      "  estimate {:.6g}, SE {:.6g}, t({:g}) = {:.4g}, p = {:.4g}, {:g}% CI [{:.6g}, {:.6g}]\n",
      c.estimate, c.se, c.df, c.t, c.p, r.confidence * 100, c.ci.lower, c.ci.upper);
  if (r.log_response) {
    for (int a = 0; a < 2; ++a)
      out += fmt::format("  speed-up of {} from {} {} to {}: {:.4g} (ratio of geometric means)\n",
                         r.levels_a[a], r.factor_b, r.levels_b[0], r.levels_b[1],
                         std::exp(r.means[a][1] - r.means[a][0]));
    out +=
        fmt::format("  ratio of speed-ups, {} / {}: {:.4g}, {:g}% CI [{:.4g}, {:.4g}]{}\n",
                    r.levels_a[1], r.levels_a[0], std::exp(c.estimate), r.confidence * 100,
                    std::exp(c.ci.lower), std::exp(c.ci.upper),
                    c.ci.lower > 0 || c.ci.upper < 0 ? "" : " (includes 1: no difference shown)");
  }
  return out;
}

nlohmann::json contrast_json(const ContrastReport& r) {
  nlohmann::json cells = nlohmann::json::array();
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      cells.push_back({{r.factor_a, r.levels_a[a]},
                       {r.factor_b, r.levels_b[b]},
                       {"n", r.n[a][b]},
                       {"mean", r.means[a][b]}});
  nlohmann::json out = {
      {"factors", {r.factor_a, r.factor_b}},
      {"cells", cells},
      {"estimate", r.contrast.estimate},
      {"se", r.contrast.se},
      {"df", r.contrast.df},
      {"t", std::isfinite(r.contrast.t) ? nlohmann::json(r.contrast.t) : nlohmann::json(nullptr)},
      {"p", r.contrast.p},
      {"confidence", r.confidence},
      {"ci", {r.contrast.ci.lower, r.contrast.ci.upper}}};
  if (r.log_response) {
    out["ratio_of_speedups"] = std::exp(r.contrast.estimate);
    out["ratio_ci"] = {std::exp(r.contrast.ci.lower), std::exp(r.contrast.ci.upper)};
  }
  return out;
}

}  // namespace scalebench::plotting
