#include "report/analysis/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "report/analysis/pairwise.hpp"
#include "report/analysis/report_support.hpp"
#include "stats/anova.hpp"
#include "stats/descriptive.hpp"
#include "stats/factorial_anova.hpp"
#include "stats/games_howell.hpp"
#include "stats/letters.hpp"
#include "stats/nested_anova.hpp"
#include "stats/ratio_interval.hpp"
#include "stats/sequential.hpp"
#include "stats/tukey.hpp"
#include "stats/welch_anova.hpp"
#include "util/text.hpp"

namespace scalebench::report {

using detail::join;
using detail::kSingleLauncher;
namespace {

struct Group {
  std::string condition;
  std::string launcher;
  FactorLevels levels;
  int np = 1;
  std::vector<double> durations;
  std::set<std::int64_t> run_ids;
  std::map<std::int64_t, const Run*> per_run;  // by id: the runs in id order
  long long images = 0;                        // sum of train_images over the epochs that report it
  double timed_seconds = 0;                    // sum of durations over those same epochs
  std::size_t epochs_without_images = 0;
};

FactorLevels without(const FactorLevels& levels, const std::optional<std::string>& omit) {
  if (!omit) return levels;
  FactorLevels out;
  for (const auto& pair : levels)
    if (pair.first != *omit) out.push_back(pair);
  return out;
}

std::vector<Group> group_runs(const std::string& experiment, const std::vector<Run>& runs,
                              const ReportOptions& options) {
  std::vector<Group> groups;
  std::map<std::tuple<std::string, std::string, FactorLevels, int>, std::size_t> index;
  for (const auto& run : runs) {
    if (run.experiment != experiment || run.epochs.empty()) continue;
    auto levels = without(run.levels, options.omit_factor);
    auto key = std::make_tuple(run.condition, run.launcher, levels, run.np);
    auto [it, inserted] = index.try_emplace(key, groups.size());
    if (inserted) {
      Group group;
      group.condition = run.condition;
      group.launcher = run.launcher;
      group.levels = std::move(levels);
      group.np = run.np;
      groups.push_back(std::move(group));
    }
    Group& group = groups[it->second];
    group.run_ids.insert(run.id);
    group.per_run[run.id] = &run;
    for (const auto& epoch : run.epochs) {
      if (!std::isfinite(epoch.seconds) || epoch.seconds < 0) {
        throw ReportError(fmt::format(
            "epoch {} of run {} has an invalid duration ({} s): the database is inconsistent",
            epoch.number, run.id, epoch.seconds));
      }
      group.durations.push_back(epoch.seconds);
      if (run.train_images) {
        group.images += *run.train_images;
        group.timed_seconds += epoch.seconds;
      } else {
        ++group.epochs_without_images;
      }
    }
  }
  // The file's order (conditions, then levels, then np), not the order the runs happened in.
  const auto sort_key = [&](const Group& g) {
    return group_order_key(options.condition_order, options.level_order, g.condition, g.levels,
                           g.launcher, g.np);
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const Group& a, const Group& b) { return sort_key(a) < sort_key(b); });
  return groups;
}

// Labels per the group_label rule; groups that would share one also name their launcher.
std::vector<std::string> make_labels(const std::vector<Group>& groups) {
  std::vector<std::string> labels;
  std::map<std::string, int> count;
  for (const auto& g : groups)
    labels.push_back(group_label(g.condition, g.launcher, g.np, g.levels));
  for (const auto& label : labels) ++count[label];
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (count[labels[i]] > 1) {
      labels[i] = fmt::format(
          "{} [{}] np={}", group_label(groups[i].condition, kSingleLauncher, 1, groups[i].levels),
          groups[i].launcher, groups[i].np);
    }
  }
  return labels;
}

std::size_t choose_base(const std::vector<std::string>& labels, const std::vector<Group>& groups,
                        const ReportOptions& options) {
  if (options.base_label) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == *options.base_label) return i;
    }
    std::vector<std::string> quoted;
    for (const auto& label : labels) quoted.push_back(fmt::format("'{}'", label));
    throw ReportError(fmt::format("no group is labelled '{}'; the groups are: {}",
                                  *options.base_label, join(quoted)));
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].np == 1 && groups[i].launcher != kSingleLauncher) return i;
  }
  return 0;
}

// The row whose throughput defines linear scaling for row i: the np=1 group of the same
// condition, launcher and factor levels when i is launched (not "single") and that group exists;
// else the base when it has the same levels, else a launched np=1 group with the same levels (a
// single row of another model is not compared with the base model), else the base.
// Why a cell of precision-driven repetitions stopped, judged by the rule the runner used on the
// same runs' means (stats/sequential.hpp), so that the table and `run` agree.
void add_stop(ReportRow& row, const std::vector<double>& run_means, const RepetitionRule& rule) {
  const stats::PrecisionRule precision{rule.min_runs, rule.max_runs, rule.precision};
  const auto decision = stats::precision_stop(run_means, precision);
  row.stop_reason = decision.stop ? std::string(stats::stop_reason_name(decision.reason))
                                  : std::string("running");
  if (std::isfinite(decision.relative_half_width))
    row.stop_relative_half_width = decision.relative_half_width;
  row.stop_text = stats::stop_reason_text(decision, precision);
}

// Images per epoch of a group, when every epoch reported them (all ranks together).
std::optional<double> images_per_epoch(const Group& g) {
  if (g.epochs_without_images > 0 || g.durations.empty() || g.images <= 0) return std::nullopt;
  return static_cast<double>(g.images) / static_cast<double>(g.durations.size());
}

// A weak-scaling study: every series (a condition and levels, over np) measured at more than one
// np keeps its images per epoch per process and so grows its images with np (the experiment
// file's train_images_per_rank, or a program that shards a fixed count per rank); at least one
// such series. Then a group's speed-up is its images/s over the base's (the scaled speed-up):
// the ratio of epoch times would read 0.56 at np 16 while throughput rose 8.9 times.
bool is_weak_scaling(const std::vector<Group>& groups) {
  std::map<std::pair<std::string, FactorLevels>, std::vector<const Group*>> series;
  for (const auto& g : groups) series[{g.condition, g.levels}].push_back(&g);
  bool any = false;
  for (const auto& [key, members] : series) {
    std::set<int> nps;
    for (const auto* g : members) nps.insert(g->np);
    if (nps.size() < 2) continue;
    std::optional<double> per_process;
    for (const auto* g : members) {
      const auto images = images_per_epoch(*g);
      if (!images) return false;
      const double each = *images / g->np;
      if (per_process && std::abs(each - *per_process) > 1e-9 * *per_process) return false;
      per_process = each;
    }
    any = true;
  }
  return any;
}

std::size_t efficiency_reference(const std::vector<Group>& groups, std::size_t i,
                                 std::size_t base) {
  const Group& g = groups[i];
  if (g.launcher != kSingleLauncher) {
    for (std::size_t j = 0; j < groups.size(); ++j) {
      if (groups[j].np == 1 && groups[j].condition == g.condition &&
          groups[j].launcher == g.launcher && groups[j].levels == g.levels) {
        return j;
      }
    }
  }
  if (groups[base].levels == g.levels) return base;
  for (std::size_t j = 0; j < groups.size(); ++j)
    if (groups[j].np == 1 && groups[j].launcher != kSingleLauncher && groups[j].levels == g.levels)
      return j;
  return base;
}

}  // namespace

std::string describe_unit(std::string_view unit) {
  if (unit == "run")
    return "Unit of analysis: one run (its mean epoch time); N = runs. Epochs of one run share its "
           "placement, start-up and neighbours, so the run is the independent sample "
           "(docs/statistics.md, \"Unit of analysis\").";
  if (unit == "nested")
    return "Unit of analysis: epochs within runs (a linear mixed model, run as random effect, "
           "fitted by REML; F, t and Tukey on Satterthwaite d.f., as R's lmerTest).";
  return "Unit of analysis: one epoch, as the reference papers did. Epochs of the same run are "
         "not independent samples (pseudo-replication), so the ANOVA and Tukey degrees of "
         "freedom are inflated and the p-values too small: for reproducing published tables, "
         "not for claims (use --unit run or nested).";
}

namespace {

// All k(k-1)/2 Tukey p-values are a quadrature each: 60 groups take about a second.
constexpr std::size_t kMaxLetterGroups = 60;

// A row as a note lists it: its display label, quoted where it has a comma (the lists' separator).
std::string listed(const ReportRow& row, const Labels& labels) {
  const auto shown = display_label(row, labels);
  return shown.find(", ") == std::string::npos ? shown : "\"" + shown + "\"";
}

// Images/s and efficiency are epoch-time ratios scaled by constants (images per epoch, np), so
// their intervals are the speed-up's delta method on the log scale (docs/metrics.md): images/s
// from the row's own mean, efficiency from the ratio of its reference's mean to the row's. The
// reference row itself has none: its efficiency is 1 by definition.
void add_rate_intervals(ReportTable& table, std::size_t i, std::size_t ref,
                        const std::vector<std::optional<stats::MeanWithError>>& estimates,
                        const stats::NestedAnova* nested_fit) {
  ReportRow& row = table.rows[i];
  try {
    if (row.images_per_second && estimates[i] && estimates[i]->mean > 0 &&
        estimates[i]->se == 0) {  // no spread: a point, as the speed-up's and efficiency's
      row.images_ci_lower = row.images_ci_upper = *row.images_per_second;
    } else if (row.images_per_second && estimates[i] && estimates[i]->mean > 0) {
      const auto log_ci =
          stats::log_scale_interval(*row.images_per_second, estimates[i]->se / estimates[i]->mean,
                                    estimates[i]->df, table.confidence);
      row.images_ci_lower = log_ci.ci.lower;
      row.images_ci_upper = log_ci.ci.upper;
    }
    if (i != ref && row.scaling_efficiency && estimates[i] && estimates[ref]) {
      const auto ratio =
          nested_fit ? stats::nested_ratio_interval(*nested_fit, ref, i, table.confidence)
                     : stats::ratio_interval(*estimates[ref], *estimates[i], table.confidence);
      if (ratio.ratio > 0) {
        row.efficiency_ci_lower = *row.scaling_efficiency * ratio.ci.lower / ratio.ratio;
        row.efficiency_ci_upper = *row.scaling_efficiency * ratio.ci.upper / ratio.ratio;
      }
    }
  } catch (const stats::StatsError&) {
    // A zero mean or error leaves the row without these intervals, as the speed-up's.
  }
}

// The compact letter display of the whole Tukey family (all pairs, which the k - 1 p-values
// against the base do not need): rows sharing a letter do not differ at the table's confidence.
// The letters are named in the table's order (stats/letters.hpp), as multcomp::cld names them.
// `games_howell`: the family is Games-Howell's, these pairs (pairwise.hpp).
void add_letters(ReportTable& table, const std::vector<std::vector<double>>& observations,
                 const stats::NestedAnova* nested_fit,
                 const std::vector<stats::GamesHowellPair>* games_howell = nullptr) {
  const std::size_t k = table.rows.size();
  if (k > kMaxLetterGroups) {
    table.notes.push_back(
        fmt::format("No letters: {} groups (all {} Tukey pairs are computed only up to {} groups).",
                    k, k * (k - 1) / 2, kMaxLetterGroups));
    return;
  }
  try {
    std::vector<std::vector<bool>> significant(k, std::vector<bool>(k, false));
    const auto mark = [&](const auto& pairs) {
      for (const auto& pair : pairs)
        significant[pair.a][pair.b] = significant[pair.b][pair.a] =
            pair.p_adjusted < 1 - table.confidence;
    };
    if (games_howell)
      mark(*games_howell);
    else
      mark(nested_fit ? stats::nested_tukey(*nested_fit, table.confidence)
                      : stats::tukey_hsd(observations, table.confidence));
    std::vector<double> means;
    for (const auto& row : table.rows)
      means.push_back(row.mean_epoch_seconds - table.rows.front().mean_epoch_seconds);
    const auto letters = stats::compact_letters(means, significant);
    for (std::size_t g = 0; g < k; ++g) table.rows[g].letters = letters[g];
  } catch (const stats::StatsError& error) {
    table.notes.push_back(fmt::format("No letters: {}.", error.what()));
  }
}

}  // namespace

namespace {

// Last epochs ended by the run's last line or the process's exit (no end-of-epoch line): per
// rule, how many, and whether each came out longer than its run's other epochs (late: it holds
// what the program did after training) or shorter (early), by the mean gap to their median.
std::optional<std::string> last_epoch_note(const std::string& experiment,
                                           const std::vector<Run>& runs) {
  // Per rule, the last epochs longer than their runs' others (late) and shorter (early), and the
  // sum of their gaps to the others' median.
  struct Tally {
    std::size_t count = 0;
    double gap = 0;
  };
  std::map<std::string, std::pair<Tally, Tally>> by_rule;  // rule -> (late, early)
  for (const auto& run : runs) {
    if (run.experiment != experiment || run.epochs.empty()) continue;
    const auto& epochs = run.epochs;
    const auto last =
        std::max_element(epochs.begin(), epochs.end(),
                         [](const auto& a, const auto& b) { return a.number < b.number; });
    if (last->end_rule != "last_line" && last->end_rule != "exit") continue;
    // Against the epochs between the first (the warm-up, where the analysis kept it) and the
    // last, as the run's own check (docs/metrics.md); with two epochs, the first.
    std::vector<double> others;
    for (auto epoch = epochs.begin(); epoch != epochs.end(); ++epoch)
      if (epoch != last && (epoch->number != 1 || epochs.size() == 2))
        others.push_back(epoch->seconds);
    auto& [late, early] = by_rule[*last->end_rule];
    if (others.empty()) {
      ++late.count;  // nothing to compare with: what the rule includes makes it late
      continue;
    }
    std::nth_element(others.begin(), others.begin() + others.size() / 2, others.end());
    const double gap = last->seconds - others[others.size() / 2];
    Tally& side = gap >= 0 ? late : early;
    ++side.count;
    side.gap += std::abs(gap);
  }
  if (by_rule.empty()) return std::nullopt;
  const auto said = [](const Tally& tally, const char* direction, const char* than,
                       const char* why) {
    return fmt::format("{} {} ({} than their runs' other epochs, by {:.3g} s on average: {})",
                       tally.count, direction, than, tally.gap / static_cast<double>(tally.count),
                       why);
  };
  std::vector<std::string> parts;
  for (const auto& [rule, sides] : by_rule) {
    const auto& [late, early] = sides;
    std::vector<std::string> directions;
    if (late.count > 0)
      directions.push_back(
          said(late, "late", "longer", "they include what the program did after training"));
    if (early.count > 0)
      directions.push_back(said(early, "early", "shorter",
                                "the program's last line came before the epoch's work ended"));
    parts.push_back(fmt::format("{} at the {} (rule `{}`): {}", late.count + early.count,
                                rule == "exit" ? "process's exit" : "run's last line", rule,
                                join(directions, ", ")));
  }
  return fmt::format(
      "Last epochs without an end-of-epoch line: {}; docs/metrics.md, \"The last epoch\".",
      join(parts, "; "));
}

}  // namespace

ReportTable build_report(std::string experiment, const std::vector<Run>& runs,
                         const ReportOptions& options) {
  if (std::find(std::begin(kPairwiseChoices), std::end(kPairwiseChoices), options.pairwise) ==
      std::end(kPairwiseChoices))
    throw ReportError(
        fmt::format("--pairwise {}: expected auto, tukey or games-howell", options.pairwise));
  const std::vector<Group> groups = group_runs(experiment, runs, options);
  if (groups.empty()) {
    throw ReportError(fmt::format(
        "no epochs with durations for experiment '{}': did the runs fail? see `scalebench query "
        "{} runs`",
        experiment, experiment));
  }
  const std::vector<std::string> labels = make_labels(groups);
  const std::size_t base = choose_base(labels, groups, options);

  check_unit(options.unit);
  ReportTable table;
  table.experiment = std::move(experiment);
  table.base_label = labels[base];
  table.unit = options.unit;
  table.labels = options.labels;
  table.confidence = options.confidence;
  table.notes.push_back(describe_unit(table.unit));

  // The unit's observations per group, built once: every epoch, or the runs' mean epoch times
  // (run and nested; nested fits the epochs within runs besides).
  std::vector<std::vector<double>> observations(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (table.unit == "epoch") {
      observations[i] = groups[i].durations;
      continue;
    }
    for (const auto& [id, run] : groups[i].per_run)
      observations[i].push_back(run->mean_epoch_seconds());
  }
  std::optional<stats::NestedAnova> nested_fit;
  std::optional<std::string> nested_error;
  if (table.unit == "nested") {
    stats::NestedData nested(groups.size());
    for (std::size_t i = 0; i < groups.size(); ++i)
      for (const auto& [id, run] : groups[i].per_run) {
        std::vector<double> seconds;
        for (const auto& epoch : run->epochs) seconds.push_back(epoch.seconds);
        nested[i].push_back(std::move(seconds));
      }
    try {
      nested_fit = stats::nested_anova(nested);
      if (nested_fit->singular)
        table.notes.push_back(
            "The mixed model's run-to-run variance is estimated as 0 (a singular fit): the runs "
            "of a group vary no more than their epochs do.");
    } catch (const stats::StatsError& error) {
      nested_error = error.what();
    }
  }
  std::vector<std::optional<stats::MeanWithError>> estimates(groups.size());

  std::vector<std::optional<double>> throughput(groups.size());
  std::vector<std::string> partial_images;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    ReportRow row;
    row.label = labels[i];
    row.condition = g.condition;
    row.launcher = g.launcher;
    row.levels = g.levels;
    row.np = g.np;
    row.runs = g.run_ids.size();
    {
      std::vector<double> run_means, run_rates;
      bool rates = true;
      for (const auto& [id, run] : g.per_run) {
        run_means.push_back(run->mean_epoch_seconds());
        if (const auto rate = run->images_per_second())
          run_rates.push_back(*rate);
        else
          rates = false;
      }
      row.sd_run_epoch_seconds = stats::sample_sd(run_means);
      std::vector<double> accuracies;
      for (const auto& [id, run] : g.per_run)
        if (run->test_accuracy) accuracies.push_back(*run->test_accuracy);
      if (!accuracies.empty()) row.mean_test_accuracy = stats::mean(accuracies);
      if (rates) row.sd_run_images_per_second = stats::sample_sd(run_rates);
      row.run_epoch_seconds = run_means;
      if (options.repetition_rule) add_stop(row, run_means, *options.repetition_rule);
      if (rates) row.run_images_per_second = run_rates;
    }
    row.epochs = g.durations.size();
    const auto& values = observations[i];
    row.mean_epoch_seconds = stats::mean(values);
    row.sd_epoch_seconds = stats::sample_sd(values);
    if (nested_fit) {
      const auto& e = nested_fit->mean_estimates[i];
      row.mean_epoch_seconds = nested_fit->means[i];
      estimates[i] = stats::MeanWithError{e.estimate, e.se, e.df};
    } else if (values.size() > 1 && table.unit != "nested") {
      estimates[i] = stats::MeanWithError{row.mean_epoch_seconds,
                                          *row.sd_epoch_seconds / std::sqrt(double(values.size())),
                                          double(values.size() - 1)};
    }
    if (estimates[i]) {
      const auto t = stats::students_t_quantile((1 + table.confidence) / 2, estimates[i]->df);
      row.mean_ci_lower = estimates[i]->mean - t * estimates[i]->se;
      row.mean_ci_upper = estimates[i]->mean + t * estimates[i]->se;
    }
    row.is_base = i == base;
    if (g.epochs_without_images == 0 && g.timed_seconds > 0) {
      throughput[i] = static_cast<double>(g.images) / g.timed_seconds;
    } else if (g.epochs_without_images < g.durations.size()) {
      partial_images.push_back(listed(row, options.labels));
    }
    row.images_per_second = throughput[i];
    table.rows.push_back(std::move(row));
  }

  table.weak_scaling = is_weak_scaling(groups);
  table.repetition_rule = options.repetition_rule;
  if (const auto& rule = options.repetition_rule)
    table.notes.push_back(fmt::format(
        "Runs by precision: each cell got runs until the {} interval of its mean epoch time had "
        "a half-width of at most ±{:g}% of the mean (at least {}, at most {} runs; the rule of "
        "docs/statistics.md, \"Precision-driven repetitions\"); † marks a cell stopped at the "
        "most runs before reaching it.",
        fmt::format("{:g}%", table.confidence * 100), rule->precision * 100, rule->min_runs,
        rule->max_runs));
  if (table.weak_scaling) table.notes.push_back(std::string(kWeakScalingNote));
  std::vector<std::string> single_epoch, two_runs;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    ReportRow& row = table.rows[i];
    // Weak scaling: the scaled speed-up, the epoch-time ratio times the ratio of images per epoch
    // (a constant, so it scales the interval too): images/s over the base's (docs/metrics.md).
    // Without either group's images there is no scaled speed-up to give.
    std::optional<double> work = 1.0;
    if (table.weak_scaling && i != base) {
      const auto own = images_per_epoch(groups[i]), base_images = images_per_epoch(groups[base]);
      work = own && base_images ? std::optional<double>(*own / *base_images) : std::nullopt;
    }
    if (row.mean_epoch_seconds > 0 && work) {
      row.speedup_vs_base = table.rows[base].mean_epoch_seconds / row.mean_epoch_seconds * *work;
      if (i != base && estimates[i] && estimates[base] && table.rows[base].mean_epoch_seconds > 0) {
        // Nested: one contrast of the fitted model with its own Satterthwaite d.f. (lmerTest's
        // contest); runs: two independent means, Welch's d.f.
        const auto ratio =
            nested_fit ? stats::nested_ratio_interval(*nested_fit, base, i, table.confidence)
                       : stats::ratio_interval(*estimates[base], *estimates[i], table.confidence);
        row.speedup_ci_lower = ratio.ci.lower * *work;
        row.speedup_ci_upper = ratio.ci.upper * *work;
      }
    }
    const std::size_t ref = efficiency_reference(groups, i, base);
    if (throughput[i] && throughput[ref] && *throughput[ref] > 0) {
      const double ideal = *throughput[ref] * groups[i].np / groups[ref].np;
      row.scaling_efficiency = *throughput[i] / ideal;
    }
    add_rate_intervals(table, i, ref, estimates, nested_fit ? &*nested_fit : nullptr);
    if ((table.unit == "epoch" ? row.epochs : row.runs) == 1)
      single_epoch.push_back(listed(row, table.labels));
    if (row.runs == 2) two_runs.push_back(listed(row, table.labels));
  }
  if (!single_epoch.empty()) {
    table.notes.push_back(fmt::format("No standard deviation for groups with one {}: {}.",
                                      table.unit == "epoch" ? "epoch" : "run", join(single_epoch)));
  }
  // An interval of an epoch time that reaches below zero is marked: the quantity is positive, so
  // the interval says the data cannot place the mean (the usual cause: 2 runs, next note).
  std::vector<std::string> below_zero;
  for (const auto& row : table.rows)
    if (row.mean_ci_lower && *row.mean_ci_lower < 0)
      below_zero.push_back(listed(row, table.labels));
  if (!below_zero.empty())
    table.notes.push_back(fmt::format(
        "Intervals reaching below 0: {}: an epoch time is positive, so these intervals only say "
        "that the runs cannot place the mean; read the speed-up's interval (log scale, always "
        "positive) instead, and repeat the runs.",
        join(below_zero)));
  // Two runs give a t interval on 1 d.f. (t = 12.7): wide, and for an epoch time it may reach
  // below zero. Say so rather than let the interval pass for a measurement.
  if (!two_runs.empty()) {
    table.notes.push_back(fmt::format(
        "Groups with 2 runs: {}: their intervals rest on 1 degree of freedom (t = 12.7 at 95%) and "
        "say almost nothing (an epoch time's may reach below 0); repeat the runs (\"repetitions\" "
        ">= 3, better 5).",
        join(two_runs)));
  }
  if (auto note = last_epoch_note(table.experiment, runs)) table.notes.push_back(*note);
  if (!partial_images.empty()) {
    table.notes.push_back(
        fmt::format("No images/s for groups where some runs did not report train_images: {}.",
                    join(partial_images)));
  }

  if (groups.size() < 2) {
    table.notes.push_back("No ANOVA or Tukey test: the experiment has only one group.");
    return table;
  }
  if (nested_error) {
    table.notes.push_back(fmt::format("No ANOVA, Tukey test or intervals: {}.", *nested_error));
    return table;
  }
  std::size_t total = 0;
  for (const auto& values : observations) total += values.size();
  if (!nested_fit && total <= groups.size()) {
    table.notes.push_back(fmt::format(
        "No ANOVA or Tukey test: every group has one {}, so there is no within-group variance.",
        table.unit));
    return table;
  }
  // Pooled (Tukey, F) unless the variances differ too much to pool (pairwise.hpp); the mixed
  // model has its own variance components.
  std::optional<std::vector<stats::GamesHowellPair>> games_howell;
  if (!nested_fit && options.pairwise != "tukey") {
    auto choice = choose_pairwise(observations, table.unit, kMaxLetterGroups);
    if (options.pairwise == "games-howell" && !choice.games_howell) {
      choice.games_howell = true;
      choice.note =
          "The p-values and letters are Games-Howell's and the F test is Welch's "
          "(--pairwise games-howell).";
    }
    if (choice.games_howell) {
      try {
        games_howell = stats::games_howell(observations, table.confidence);
        table.pairwise = "Games-Howell";
        table.notes.push_back(*choice.note);
      } catch (const stats::StatsError& error) {
        table.notes.push_back(fmt::format(
            "No Games-Howell test ({}): Tukey's, on the pooled variance.", error.what()));
      }
    } else if (choice.note) {
      table.notes.push_back(*choice.note);
    }
  }
  try {
    if (nested_fit) {
      if (nested_fit->f)
        table.anova =
            AnovaSummary{*nested_fit->f, *nested_fit->df_num, *nested_fit->df_den, *nested_fit->p};
      for (const stats::TukeyPair& pair : stats::nested_tukey(*nested_fit, table.confidence, base))
        table.rows[pair.b].tukey_p_vs_base = pair.p_adjusted;
    } else if (games_howell) {
      const auto welch = stats::welch_anova(observations);
      table.anova = AnovaSummary{welch.f, welch.df_between, welch.df_within, welch.p, true};
      for (const auto& pair : *games_howell) {
        if (pair.a == base) table.rows[pair.b].tukey_p_vs_base = pair.p_adjusted;
        if (pair.b == base) table.rows[pair.a].tukey_p_vs_base = pair.p_adjusted;
      }
    } else {
      const stats::OneWayAnova anova = stats::one_way_anova(observations);
      table.anova = AnovaSummary{anova.f, anova.df_between, anova.df_within, anova.p};
      // Only the k - 1 pairs against the base: all k(k-1)/2 took minutes for 300 groups.
      for (const stats::TukeyPair& pair : stats::tukey_vs_base(observations, base))
        table.rows[pair.b].tukey_p_vs_base = pair.p_adjusted;
    }
  } catch (const stats::StatsError& error) {
    table.anova.reset();
    for (auto& row : table.rows) row.tukey_p_vs_base.reset();
    table.notes.push_back(fmt::format("No ANOVA or {} test: {}.", table.pairwise, error.what()));
    return table;
  }
  add_letters(table, observations, nested_fit ? &*nested_fit : nullptr,
              games_howell ? &*games_howell : nullptr);
  return table;
}

}  // namespace scalebench::report
