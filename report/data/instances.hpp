// Which experiment instances a report, figure or statistic is built from (docs/report.md).
// Each `scalebench run` is an instance; by default the latest one is used, and instances are
// pooled only when asked and only when their specs are identical.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"

namespace scalebench::report {

struct InstanceQuery {
  std::optional<std::string> experiment;  // a name; default: the latest instance's
  std::vector<std::int64_t> instances;    // explicit instance ids (pooled when several)
  bool pool = false;                      // every instance of the name
  // Warm-up epochs left out of each run (--skip-epochs); default: warmup_rule's.
  std::optional<int> skip_epochs = std::nullopt;
};

struct InstanceSelection {
  std::string experiment;          // the name
  std::vector<std::int64_t> ids;   // oldest first
  std::vector<std::string> notes;  // what was used (and pooled), for the report's notes
};

// Throws ReportError: nothing stored, an unknown name or id, instances of different names, or
// instances whose specs differ (the message names the differing instances and JSON paths).
InstanceSelection select_instances(const db::Database& database, const InstanceQuery& query);

// The ok runs' epochs of the selected instances without each run's warm-up: its first N epochs,
// N from warmup_rule (docs/metrics.md, "Warm-up epochs"). A run with N epochs or fewer keeps them
// all, said in a note; when N > 0 a note says what was left out. Notes go to selection.notes.
std::vector<db::EpochSample> epoch_samples_after_warmup(const db::Database& database,
                                                        InstanceSelection& selection,
                                                        const InstanceQuery& query);
// The experiment file's "warmup_epochs" of the (first) selected instance, if it has one.
std::optional<int> warmup_epochs_of(const db::Database& database,
                                    const InstanceSelection& selection);

// The warm-up left out when neither --skip-epochs nor the experiment file says: none, for every
// command (report, stats, plot, compare, model). An analysis shows what was measured unless the
// study's own file decides otherwise (HorovodRunner's epoch times include the first epoch), so a
// table and a model fitted to the same runs use the same epochs (docs/metrics.md).
inline constexpr int kDefaultWarmupEpochs = 0;

// The one warm-up rule: --skip-epochs (`skip`, checked >= 0), else the experiment file's
// "warmup_epochs", else kDefaultWarmupEpochs; with where it came from, for the notes.
struct WarmupRule {
  int epochs = kDefaultWarmupEpochs;
  std::string origin;  // "--skip-epochs", "the experiment file's \"warmup_epochs\"", "the default"
};
WarmupRule warmup_rule(const db::Database& database, const InstanceSelection& selection,
                       std::optional<int> skip);
// The rule itself: drops epochs 1..warmup of every run that has more than `warmup` epochs;
// returns how many runs were too short to drop anything from.
std::size_t drop_warmup_epochs(std::vector<db::EpochSample>& samples, int warmup);

// Notes on runs that are not ok, per condition and np: conditions none of whose runs are ok would
// otherwise vanish from a table without a word.
std::vector<std::string> failure_notes(const std::vector<db::RunRecord>& runs);

}  // namespace scalebench::report
