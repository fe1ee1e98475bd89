#include "plotting/report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "stats/anova.hpp"
#include "stats/descriptive.hpp"
#include "stats/tukey.hpp"

namespace scalebench::plotting {
namespace {

constexpr std::string_view kSingleLauncher = "single";

struct Group {
  std::string condition;
  std::string launcher;
  int np = 1;
  std::vector<double> durations;
  std::set<std::int64_t> run_ids;
  long long images = 0;      // sum of train_images over the epochs that report it
  double timed_seconds = 0;  // sum of durations over those same epochs
  std::size_t epochs_without_images = 0;
};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::vector<Group> group_samples(const std::string& experiment,
                                 const std::vector<db::EpochSample>& samples) {
  std::vector<Group> groups;
  std::map<std::tuple<std::string, std::string, int>, std::size_t> index;
  for (const auto& sample : samples) {
    if (sample.experiment != experiment) continue;
    if (!std::isfinite(sample.duration_seconds) || sample.duration_seconds < 0) {
      throw ReportError(fmt::format(
          "epoch {} of run {} has an invalid duration ({} s): the database is inconsistent",
          sample.epoch, sample.run_id, sample.duration_seconds));
    }
    auto key = std::make_tuple(sample.condition, sample.launcher, sample.np);
    auto [it, inserted] = index.try_emplace(key, groups.size());
    if (inserted)
      groups.push_back(Group{sample.condition, sample.launcher, sample.np, {}, {}, 0, 0, 0});
    Group& group = groups[it->second];
    group.durations.push_back(sample.duration_seconds);
    group.run_ids.insert(sample.run_id);
    if (sample.train_images) {
      group.images += *sample.train_images;
      group.timed_seconds += sample.duration_seconds;
    } else {
      ++group.epochs_without_images;
    }
  }
  return groups;
}

// Labels per the group_label rule; groups that would share one also name their launcher.
std::vector<std::string> make_labels(const std::vector<Group>& groups) {
  std::vector<std::string> labels;
  std::map<std::string, int> count;
  for (const auto& g : groups) labels.push_back(group_label(g.condition, g.launcher, g.np));
  for (const auto& label : labels) ++count[label];
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (count[labels[i]] > 1) {
      labels[i] =
          fmt::format("{} [{}] np={}", groups[i].condition, groups[i].launcher, groups[i].np);
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

// The row whose throughput defines linear scaling for row i: the np=1 group of the same condition
// and launcher when i is launched (not "single") and that group exists, else the base.
std::size_t efficiency_reference(const std::vector<Group>& groups, std::size_t i,
                                 std::size_t base) {
  if (groups[i].launcher != kSingleLauncher) {
    for (std::size_t j = 0; j < groups.size(); ++j) {
      if (groups[j].np == 1 && groups[j].condition == groups[i].condition &&
          groups[j].launcher == groups[i].launcher) {
        return j;
      }
    }
  }
  return base;
}

}  // namespace

std::string group_label(std::string_view condition, std::string_view launcher, int np) {
  if (launcher == kSingleLauncher) return std::string(condition);
  return fmt::format("{} np={}", condition, np);
}

ReportTable build_report(std::string experiment, const std::vector<db::EpochSample>& samples,
                         const ReportOptions& options) {
  const std::vector<Group> groups = group_samples(experiment, samples);
  if (groups.empty()) {
    throw ReportError(fmt::format(
        "no epochs with durations for experiment '{}': did the runs fail? see `scalebench query "
        "{} runs`",
        experiment, experiment));
  }
  const std::vector<std::string> labels = make_labels(groups);
  const std::size_t base = choose_base(labels, groups, options);

  ReportTable table;
  table.experiment = std::move(experiment);
  table.base_label = labels[base];
  table.notes.push_back(
      "Unit of analysis: one epoch. Epochs of the same run are not independent samples "
      "(pseudo-replication), so the ANOVA and Tukey degrees of freedom are inflated and the "
      "p-values too small; a per-run analysis is planned.");

  std::vector<std::optional<double>> throughput(groups.size());
  std::vector<std::string> partial_images;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    ReportRow row;
    row.label = labels[i];
    row.condition = g.condition;
    row.launcher = g.launcher;
    row.np = g.np;
    row.runs = g.run_ids.size();
    row.epochs = g.durations.size();
    row.mean_epoch_seconds = stats::mean(g.durations);
    row.sd_epoch_seconds = stats::sample_sd(g.durations);
    row.is_base = i == base;
    if (g.epochs_without_images == 0 && g.timed_seconds > 0) {
      throughput[i] = static_cast<double>(g.images) / g.timed_seconds;
    } else if (g.epochs_without_images < g.durations.size()) {
      partial_images.push_back(row.label);
    }
    row.images_per_second = throughput[i];
    table.rows.push_back(std::move(row));
  }

  std::vector<std::string> single_epoch;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    ReportRow& row = table.rows[i];
    if (row.mean_epoch_seconds > 0) {
      row.speedup_vs_base = table.rows[base].mean_epoch_seconds / row.mean_epoch_seconds;
    }
    const std::size_t ref = efficiency_reference(groups, i, base);
    if (throughput[i] && throughput[ref] && *throughput[ref] > 0) {
      const double ideal = *throughput[ref] * groups[i].np / groups[ref].np;
      row.scaling_efficiency = *throughput[i] / ideal;
    }
    if (row.epochs == 1) single_epoch.push_back(row.label);
  }
  if (!single_epoch.empty()) {
    table.notes.push_back(
        fmt::format("No standard deviation for groups with one epoch: {}.", join(single_epoch)));
  }
  if (!partial_images.empty()) {
    table.notes.push_back(
        fmt::format("No images/s for groups where some runs did not report train_images: {}.",
                    join(partial_images)));
  }

  if (groups.size() < 2) {
    table.notes.push_back("No ANOVA or Tukey test: the experiment has only one group.");
    return table;
  }
  std::vector<std::vector<double>> durations;
  std::size_t total = 0;
  for (const auto& g : groups) {
    durations.push_back(g.durations);
    total += g.durations.size();
  }
  if (total <= groups.size()) {
    table.notes.push_back(
        "No ANOVA or Tukey test: every group has one epoch, so there is no within-group variance.");
    return table;
  }
  try {
    const stats::OneWayAnova anova = stats::one_way_anova(durations);
    table.anova = AnovaSummary{anova.f, anova.df_between, anova.df_within, anova.p};
    // Only the k - 1 pairs against the base are shown: all k(k-1)/2 took minutes for 300 groups.
    for (const stats::TukeyPair& pair : stats::tukey_vs_base(durations, base)) {
      table.rows[pair.b].tukey_p_vs_base = pair.p_adjusted;
    }
  } catch (const stats::StatsError& error) {
    table.anova.reset();
    for (auto& row : table.rows) row.tukey_p_vs_base.reset();
    table.notes.push_back(fmt::format("No ANOVA or Tukey test: {}.", error.what()));
  }
  return table;
}

}  // namespace scalebench::plotting
