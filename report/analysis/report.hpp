// The report: epoch samples of one experiment turned into a Table-1-style table (one row per
// condition x launcher x np), rendered by report/export/. Column definitions and formulas:
// docs/report.md.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/analysis/anova_row.hpp"
#include "report/data/labels.hpp"
#include "report/data/run_set.hpp"
#include "report/error.hpp"

namespace scalebench::report {

// One row of the table: the epochs of all runs with the same condition, launcher and np.
struct ReportRow {
  std::string label;  // group_label(condition, launcher, np, levels), unique within a table
  std::string condition;
  std::string launcher;
  int np = 1;
  std::size_t runs = 0;  // distinct runs contributing epochs
  std::size_t epochs = 0;
  // Per the table's unit: run, the mean of the runs' mean epoch times; epoch, the mean of all
  // epochs; nested, the mixed model's group mean (a weighted mean of the run means).
  double mean_epoch_seconds = 0;
  // Sample SD (n - 1) of the unit's observations: the runs' means (run, nested) or the epochs
  // (epoch); absent for one observation.
  std::optional<double> sd_epoch_seconds;
  std::optional<double> tukey_p_vs_base;     // Tukey adjusted p per the unit; absent for the base
  std::optional<double> images_per_second;   // sum(train_images) / sum(duration)
  std::optional<double> speedup_vs_base;     // base mean / row mean
  std::optional<double> scaling_efficiency;  // a fraction (1 = linear scaling), see docs
  bool is_base = false;
  // The experiment file's factors (without the --by factor in a block).
  FactorLevels levels = {};
  // Run-to-run spread: the sample SD (n - 1) of the runs' mean epoch times and of the runs'
  // images/s; absent with fewer than two runs (the figures' error bars).
  std::optional<double> sd_run_epoch_seconds = std::nullopt;
  std::optional<double> sd_run_images_per_second = std::nullopt;
  // The mean over runs of each run's final test accuracy (a fraction); absent when no run of
  // the row reported one (runs.test_accuracy).
  std::optional<double> mean_test_accuracy = std::nullopt;
  // The confidence interval of the mean (t on the unit's observations, or the model's with
  // Satterthwaite d.f. for nested); absent with one observation.
  std::optional<double> mean_ci_lower = std::nullopt, mean_ci_upper = std::nullopt;
  // The speed-up's: the delta method on log(speed-up) with Welch-Satterthwaite d.f.
  std::optional<double> speedup_ci_lower = std::nullopt, speedup_ci_upper = std::nullopt;
  // Efficiency's and images/s's, by the same delta method (docs/metrics.md); none for the base,
  // whose efficiency is 1 by definition.
  std::optional<double> efficiency_ci_lower = std::nullopt, efficiency_ci_upper = std::nullopt;
  std::optional<double> images_ci_lower = std::nullopt, images_ci_upper = std::nullopt;
  // The compact letter display of the Tukey family under the unit: rows sharing a letter do not
  // differ at the table's confidence (stats/letters.hpp); absent with fewer than two groups.
  std::optional<std::string> letters = std::nullopt;
  // Each run's own values, in run-id order (the figures draw them beside the mean): its mean epoch
  // time, and its images/s (sum of train_images over sum of durations); run_images_per_second is
  // empty when a run of the row lacks train_images.
  std::vector<double> run_epoch_seconds = {};
  std::vector<double> run_images_per_second = {};
  // With precision-driven repetitions (ReportTable::repetition_rule): why the cell stopped,
  // "precision", "max" or "running" (not stopped: an unfinished instance), its interval's
  // half-width relative to the mean as the rule judged it, and the sentence
  // ("precision reached: ±1.7 % after 5 runs"; stats/sequential.hpp).
  std::optional<std::string> stop_reason = std::nullopt;
  std::optional<double> stop_relative_half_width = std::nullopt;
  std::string stop_text = {};
};

struct AnovaSummary {
  double f = 0;
  double df_between = 0;
  double df_within = 0;
  double p = 1;
  bool welch = false;  // Welch's F (unequal variances, report/analysis/pairwise.hpp)
};

// The unit of analysis (kDefaultUnit, unit_names, check_unit) is report/data/run_set.hpp's.
// One line for readers: what the unit means, and for epoch, that its p-values are too small.
std::string describe_unit(std::string_view unit);

// The note of a weak-scaling table (ReportTable::weak_scaling): what its speed-up and efficiency
// mean there.
inline constexpr std::string_view kWeakScalingNote =
    "Weak scaling: every process trains the same images per epoch at every np, so the work grows "
    "with np and the epoch time ideally stays flat. Speed-up is the scaled speed-up, images/s "
    "over the base's; efficiency is the scaled efficiency, images/s over np times the "
    "reference's images/s per process (docs/metrics.md, \"Weak scaling\").";

struct ReportTable {
  std::string experiment;
  std::string base_label;
  std::string unit = std::string(kDefaultUnit);  // what one sample is
  double confidence = 0.95;                      // of the intervals
  std::vector<ReportRow> rows;
  std::optional<AnovaSummary> anova;  // absent with fewer than two groups
  // The test behind tukey_p_vs_base and the letters: "Tukey", or "Games-Howell" where the
  // groups' variances differ too much to pool (report/analysis/pairwise.hpp).
  std::string pairwise = "Tukey";
  std::vector<std::string> notes;  // caveats and why a statistic is absent, for readers
  // Where and with what the runs ran (db provenance, merged over the selected instances; the
  // runs' hosts under "hosts"), shown as the report's header block.
  Provenance provenance = {};
  // The program, images, warm-up, line forms, launchers and machine (report/data/setup.hpp), for
  // the paper's setup paragraph.
  std::vector<std::pair<std::string, std::string>> setup = {};
  // The scaling figure as SVG text, for the formats that embed it (html); empty: none.
  std::string figure_svg = {};
  Labels labels = {};  // what readers see instead of stored names (report/data/labels.hpp)
  // Every process trains the same images per epoch at every np (train_images_per_rank): the work
  // grows with np, so the speed-up is the scaled speed-up (images/s against the base's) and the
  // efficiency the scaled efficiency (docs/metrics.md, "Weak scaling").
  bool weak_scaling = false;
  std::optional<RepetitionRule> repetition_rule = std::nullopt;  // ReportOptions'
};

struct ReportOptions {
  std::string unit = std::string(kDefaultUnit);
  double confidence = 0.95;
  std::optional<std::string> base_label = std::nullopt;  // default: first launched np=1 group
  // Row order: conditions in file order, then factor levels in file order, then np (groups not
  // named here follow in order of first appearance). From the instance record: a randomized run
  // order must not shuffle the table.
  std::vector<std::string> condition_order = {};
  std::vector<std::pair<std::string, std::vector<std::string>>> level_order = {};
  // Leaves this factor out of labels and levels (the blocks of report --by).
  std::optional<std::string> omit_factor = std::nullopt;
  // What readers see (the table's labels): the notes name rows by their display labels.
  Labels labels = {};
  // The pairwise test behind the p-values and letters: "auto" (Tukey, or Games-Howell where the
  // variances differ too much to pool: report/analysis/pairwise.hpp), "tukey" (pooled, as the
  // reference papers did) or "games-howell". kPairwiseChoices lists them.
  std::string pairwise = "auto";
  // The experiment file's precision rule: each row says how many runs its cell got and why it
  // stopped (ReportRow::stop_reason).
  std::optional<RepetitionRule> repetition_rule = std::nullopt;
};
inline constexpr const char* kPairwiseChoices[] = {"auto", "tukey", "games-howell"};
inline std::vector<std::string> pairwise_choices() {
  return {std::begin(kPairwiseChoices), std::end(kPairwiseChoices)};
}

struct TwoWayTable {
  std::string scope;  // what was analysed: "condition hvd"
  std::string model;  // "model * np" (with interaction) or "model + np" (additive)
  std::string ss_type = "II";
  std::size_t observations = 0;
  std::vector<AnovaRow> terms;  // A, B, [A:B], Residuals
};

// HorovodRunner's Table 2: one block (an ordinary table) per level of a factor, rows by the rest
// (condition, other factors, np), and the two-way ANOVA factor x np under it.
struct FactorReport {
  std::string experiment;
  std::string factor;
  std::string unit = std::string(kDefaultUnit);
  std::vector<std::string> levels;    // block order: the file's level order
  std::vector<ReportTable> blocks;    // blocks[i]: the table of levels[i]
  std::vector<std::string> row_keys;  // every block's row labels, merged in order
  std::vector<TwoWayTable> two_way;   // one per launched condition (single has no np to cross)
  Provenance provenance = {};         // as ReportTable::provenance
  // Allreduce benchmark runs of the same instance, by level: the bus bandwidth beside the epoch
  // times (the interconnect study). One row per level, condition and np.
  struct Bandwidth {
    std::string level;
    std::string condition;
    std::string launcher;
    int np = 1;
    long long bytes = 0;       // the largest message size measured
    double busbw_gbs = 0;      // mean over the runs, at that size
    double time_us = 0;        // mean over the runs, at that size
    double avg_busbw_gbs = 0;  // mean over the runs of the mean over all sizes
    std::size_t runs = 0;
  };
  std::vector<Bandwidth> bandwidth;
  std::vector<std::string> notes;
  std::string figure_svg = {};  // as ReportTable::figure_svg
  Labels labels = {};           // as ReportTable::labels
  bool weak_scaling = false;    // as ReportTable::weak_scaling, of every block
};

// The row's label as readers see it. Without labels: row.label ("hvd model=vgg16 np=2"). With
// labels: the condition's, each level's (labels.level_with_factor) and "np = 2", joined by ", "
// ("Horovod, VGG-16, np = 2"); a row whose stored label names its launcher names it too.
std::string display_label(const ReportRow& row, const Labels& labels);

// Groups the runs of `experiment` (runs of other experiments are ignored) by (condition,
// launcher, levels, np), in the options' file order, and computes every column.
// Throws ReportError when no run has an epoch or base_label names no group.
ReportTable build_report(std::string experiment, const std::vector<Run>& runs,
                         const ReportOptions& options = {});

// The blocks of `factor` (a factor of the experiment file) with their two-way ANOVAs. Throws
// ReportError when the runs have no such factor, naming the ones they have.
FactorReport build_factor_report(std::string experiment, const std::vector<Run>& runs,
                                 const std::string& factor, const ReportOptions& options = {});

}  // namespace scalebench::report
