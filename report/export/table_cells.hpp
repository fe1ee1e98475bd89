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

template <typename Format>
std::string optional_cell(const std::optional<double>& value, Format format) {
  return value ? format(*value) : std::string(kNotAvailable);
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

// The columns a table shows after the row label: a key (util/label_keys.hpp) and a header, the
// label's where there is one. Letters and test accuracy only where some row has them.
struct TableColumns {
  std::vector<std::string> keys;
  std::vector<std::string> headers;
  std::string first_header;  // the row label's column: "Condition", or its label
};

inline TableColumns table_columns(std::string_view unit, double confidence, std::string_view base,
                                  bool letters, bool accuracy, const Labels& labels,
                                  std::string_view pairwise = "Tukey") {
  const auto ci = percent_of(confidence);
  TableColumns columns;
  const auto add = [&](std::string_view key, std::string header) {
    columns.keys.emplace_back(key);
    columns.headers.push_back(labels.of(key, header));
  };
  add("epoch_time", fmt::format("Avg. epoch time (s) [{} CI]", ci));
  add("sd", sd_header(unit));
  add("tukey", fmt::format("{} vs {}", pairwise, base));
  if (letters) add("letters", "Letters");
  add("images_per_second", fmt::format("Images/s [{} CI]", ci));
  add("speedup", fmt::format("Speed-up [{} CI]", ci));
  add("efficiency", fmt::format("Efficiency [{} CI]", ci));
  if (accuracy) add("test_accuracy", "Test accuracy");
  columns.first_header = labels.of("condition", "Condition");
  return columns;
}

// The columns of the rows of one or several tables.
inline TableColumns table_columns(const std::vector<const ReportTable*>& tables,
                                  std::string_view unit, double confidence, std::string_view base,
                                  const Labels& labels) {
  bool letters = false, accuracy = false;
  std::string pairwise;  // the tables' test, or both names when blocks differ
  for (const auto* table : tables) {
    for (const auto& row : table->rows) {
      letters = letters || row.letters.has_value();
      accuracy = accuracy || row.mean_test_accuracy.has_value();
    }
    if (pairwise.empty())
      pairwise = table->pairwise;
    else if (pairwise != table->pairwise)
      pairwise = "Tukey or Games-Howell";
  }
  return table_columns(unit, confidence, base, letters, accuracy, labels,
                       pairwise.empty() ? "Tukey" : pairwise);
}

// The text of `row`'s cell in column `key` (a TableColumns key).
inline std::string cell_text(const ReportRow& row, std::string_view key) {
  if (key == "epoch_time") return mean_cell(row);
  if (key == "sd") return optional_cell(row.sd_epoch_seconds, format_measure);
  if (key == "tukey")
    return row.is_base ? std::string(kNotAvailable)
                       : optional_cell(row.tukey_p_vs_base, format_p_value);
  if (key == "letters") return row.letters ? *row.letters : std::string(kNotAvailable);
  if (key == "images_per_second")
    return row.images_per_second ? with_interval(*row.images_per_second, row.images_ci_lower,
                                                 row.images_ci_upper, format_measure)
                                 : std::string(kNotAvailable);
  if (key == "speedup") return speedup_cell(row);
  if (key == "efficiency")
    return row.scaling_efficiency ? with_interval(*row.scaling_efficiency, row.efficiency_ci_lower,
                                                  row.efficiency_ci_upper, format_percent)
                                  : std::string(kNotAvailable);
  if (key == "test_accuracy") return optional_cell(row.mean_test_accuracy, format_percent);
  return std::string(kNotAvailable);
}

// The cells of `row` in `columns`' order.
inline std::vector<std::string> row_cells(const ReportRow& row, const TableColumns& columns) {
  std::vector<std::string> cells;
  for (const auto& key : columns.keys) cells.push_back(cell_text(row, key));
  return cells;
}

// What readers see for the table's base row.
inline std::string base_display(const ReportTable& table) {
  for (const auto& row : table.rows)
    if (row.is_base) return display_label(row, table.labels);
  return table.base_label;
}

// What readers see for a factor report's row key (a stored label shared by the blocks).
inline std::string row_key_display(const FactorReport& report, const std::string& key) {
  for (const auto& block : report.blocks)
    for (const auto& row : block.rows)
      if (row.label == key) return display_label(row, report.labels);
  return key;
}

// The columns of a factor report's blocks (their base is each block's own).
inline TableColumns factor_columns(const FactorReport& report) {
  std::vector<const ReportTable*> blocks;
  for (const auto& block : report.blocks) blocks.push_back(&block);
  const double confidence = report.blocks.empty() ? 0.95 : report.blocks[0].confidence;
  return table_columns(blocks, report.unit, confidence, "base", report.labels);
}

// A factor report's notes and its blocks' (each named by its level; their unit notes are the
// report's own, said once).
inline std::vector<std::string> factor_report_notes(const FactorReport& report) {
  std::vector<std::string> notes = report.notes;
  for (std::size_t b = 0; b < report.blocks.size(); ++b)
    for (const auto& note : report.blocks[b].notes)
      if (note.rfind("Unit of analysis", 0) != 0)
        notes.push_back(
            report.labels.empty()
                ? fmt::format("{} {}: {}", report.factor, report.levels[b], note)
                : fmt::format("{}: {}",
                              report.labels.level_with_factor(report.factor, report.levels[b]),
                              note));
  return notes;
}

}  // namespace scalebench::report
