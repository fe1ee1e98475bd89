// The report table's cells and column names as text, shared by the Markdown, LaTeX and HTML
// exporters so that the same value reads the same in each (each escapes the text for its format).
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/analysis/report.hpp"
#include "report/export/format.hpp"

namespace scalebench::report {

// "12.14 [12.07, 12.21]": a value with its confidence interval where there is one.
template <typename Format>
std::string with_interval(double value, const std::optional<double>& lower,
                          const std::optional<double>& upper, Format format) {
  if (!lower || !upper) return format(value);
  return fmt::format("{} [{}, {}]", format(value), format(*lower), format(*upper));
}

inline std::string mean_cell(const ReportRow& row) {
  return with_interval(row.mean_epoch_seconds, row.mean_ci_lower, row.mean_ci_upper,
                       format_measure);
}

inline std::string speedup_cell(const ReportRow& row) {
  if (!row.speedup_vs_base) return std::string(kNotAvailable);
  return with_interval(*row.speedup_vs_base, row.speedup_ci_lower, row.speedup_ci_upper,
                       format_ratio);
}

inline std::string percent_of(double confidence) { return fmt::format("{:g}%", confidence * 100); }

// The SD column says whose SD it is.
inline std::string sd_header(std::string_view unit) {
  return unit == "epoch" ? "Std. epoch time (s)" : "SD of run means (s)";
}

// The table's columns after the row label, in order (without the test accuracy column).
inline std::vector<std::string> column_headers(std::string_view unit, double confidence,
                                               std::string_view base) {
  return {fmt::format("Avg. epoch time (s) [{} CI]", percent_of(confidence)),
          sd_header(unit),
          fmt::format("Tukey vs {}", base),
          "Images/s",
          fmt::format("Speed-up [{} CI]", percent_of(confidence)),
          "Efficiency"};
}

template <typename Format>
std::string optional_cell(const std::optional<double>& value, Format format) {
  return value ? format(*value) : std::string(kNotAvailable);
}

// The cells of `row` in column_headers' order, plus the test accuracy when `accuracy`.
inline std::vector<std::string> row_cells(const ReportRow& row, bool accuracy) {
  std::vector<std::string> cells = {
      mean_cell(row),
      optional_cell(row.sd_epoch_seconds, format_measure),
      row.is_base ? std::string(kNotAvailable) : optional_cell(row.tukey_p_vs_base, format_p_value),
      optional_cell(row.images_per_second, format_measure),
      speedup_cell(row),
      optional_cell(row.scaling_efficiency, format_percent)};
  if (accuracy) cells.push_back(optional_cell(row.mean_test_accuracy, format_percent));
  return cells;
}

// A factor report's notes and its blocks' (each named by its level; their unit notes are the
// report's own, said once).
inline std::vector<std::string> factor_report_notes(const FactorReport& report) {
  std::vector<std::string> notes = report.notes;
  for (std::size_t b = 0; b < report.blocks.size(); ++b)
    for (const auto& note : report.blocks[b].notes)
      if (note.rfind("Unit of analysis", 0) != 0)
        notes.push_back(fmt::format("{} {}: {}", report.factor, report.levels[b], note));
  return notes;
}

}  // namespace scalebench::report
