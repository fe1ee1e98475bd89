// How a program marks its epochs when it does not print Keras's `Epoch y/z` (issue 22, item 3):
// patterns for an epoch's start, its end and its metrics, as presets for the forms people use or
// written in the experiment file ("line_forms"). docs/measuring-your-script.md.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/line_parser.hpp"

namespace scalebench::orchestrator {

struct LineForms {
  std::string name;  // the preset's, or "custom"
  // `(?<epoch>\d+)` and optionally `(?<total>\d+)`: the line that starts an epoch. Absent: epochs
  // are marked by their ends only (epoch y starts where y - 1 ended, epoch 1 at the start).
  std::optional<NamedRegex> epoch_start;
  int epoch_base = 1;  // the number the program gives its first epoch (0 for Lightning)
  // The line that ends an epoch (optionally `(?<epoch>\d+)`, else the rank's current epoch).
  std::optional<NamedRegex> epoch_end;
  std::optional<int> total_epochs;  // when no line says it
  struct Metric {
    std::string name;    // one of kMetricNames
    NamedRegex pattern;  // `(?<value>...)`, optionally `(?<of>...)`: the value is value / of
    // On a line that starts a new epoch the value is the previous epoch's (Lightning's bar keeps
    // the last validation's val_loss in its postfix while the next epoch trains).
    bool previous_epoch_on_start = false;
  };
  std::vector<Metric> metrics;
  // `(?<value>...)`: the epoch a line's metrics belong to, as a fractional count of epochs done
  // (Hugging Face's `'epoch': 1.33` is in epoch 2): ceil(value), at least 1. Absent: the rank's
  // current epoch.
  std::optional<NamedRegex> metrics_epoch;
};

// What one line says under a form: the whole line is matched (RE2, linear in it; a line is at
// most kMaxLineBytes), so `$` is its end.
struct FormMatch {
  std::optional<EpochMarker> start;  // epoch 1-based; total 0 when unknown
  std::optional<int> end_epoch;      // 1-based; 0 for "the rank's current epoch"
  bool ends = false;
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::pair<std::string, double>> previous_epoch_metrics;  // see Metric
  std::optional<int> metrics_epoch;  // 1-based, where the form says (LineForms::metrics_epoch)
};
FormMatch match_line_forms(const LineForms& forms, std::string_view text);

// The presets: pytorch-examples, lightning, hf-trainer, tqdm ("keras", the default, is no
// LineForms).
inline constexpr std::string_view kLineFormNames[] = {"keras", "pytorch-examples", "lightning",
                                                      "hf-trainer", "tqdm"};
// Throws std::invalid_argument for an unknown name; nullptr for "keras".
std::shared_ptr<const LineForms> line_forms_named(std::string_view name);

// What is wrong with a form's field: `field` is "epoch_start", "epoch_end", "epoch_base",
// "total_epochs", {"metrics", NAME}, or empty for the form as a whole.
struct LineFormError : std::invalid_argument {
  LineFormError(std::vector<std::string> field_path, const std::string& reason)
      : std::invalid_argument(reason), field(std::move(field_path)) {}
  std::vector<std::string> field;
};

// A form built from patterns (what "line_forms": {...} gives), on top of `base` (a preset or
// nothing). Throws LineFormError.
struct LineFormPatterns {
  std::optional<std::string> epoch_start, epoch_end;
  std::optional<int> epoch_base, total_epochs;
  std::vector<std::pair<std::string, std::string>> metrics;
};
std::shared_ptr<const LineForms> line_forms_from_patterns(const LineForms* base,
                                                          const LineFormPatterns& patterns);
inline constexpr std::string_view kMetricNames[] = {"loss", "accuracy", "validation_accuracy",
                                                    "test_accuracy", "images_per_second"};

}  // namespace scalebench::orchestrator
