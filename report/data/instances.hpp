// Which experiment instances a report, figure or statistic is built from (docs/report.md), and
// how much of each run is warm-up. Each `scalebench run` is an instance; by default the latest
// one is used, and instances are pooled only when asked and only when their specs are identical.
// The selection itself is made by report/data/load_runs.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// The warm-up left out when neither --skip-epochs nor the experiment file says: none, for every
// command (report, stats, plot, compare, model). An analysis shows what was measured unless the
// study's own file decides otherwise (HorovodRunner's epoch times include the first epoch), so a
// table and a model fitted to the same runs use the same epochs (docs/metrics.md).
inline constexpr int kDefaultWarmupEpochs = 0;

// The one warm-up rule: --skip-epochs (checked >= 0), else the experiment file's
// "warmup_epochs", else kDefaultWarmupEpochs; with where it came from, for the notes.
struct WarmupRule {
  int epochs = kDefaultWarmupEpochs;
  std::string origin;  // "--skip-epochs", "the experiment file's \"warmup_epochs\"", "the default"
};

}  // namespace scalebench::report
