// The report table's cells and column names as text, shared by the Markdown, LaTeX and HTML
// exporters so that the same value reads the same in each (each escapes the text for its format).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/analysis/report.hpp"
#include "report/export/column_format.hpp"
#include "report/export/exporters.hpp"
#include "report/export/format.hpp"

namespace scalebench::report {

// A number of column `format` in a Markdown or HTML cell: thousands grouped by U+202F (HTML
// writes it as an entity), a percentage with its sign.
inline std::string cell_number(double value, const ColumnFormat& format,
                               std::optional<double> reference = std::nullopt) {
  return column_number(value, format, kNarrowSpace, reference) + (format.scale == 100 ? "%" : "");
}

// "12.14 [12.07, 12.21]": a value with its confidence interval where there is one, the bounds at
// the value's decimals (and, for images/s, rounded at the value's place).
inline std::string with_interval(double value, const std::optional<double>& lower,
                                 const std::optional<double>& upper, const ColumnFormat& format) {
  if (!lower || !upper) return cell_number(value, format);
  return fmt::format("{} [{}, {}]", cell_number(value, format), cell_number(*lower, format, value),
                     cell_number(*upper, format, value));
}

inline std::string optional_number(const std::optional<double>& value, const ColumnFormat& format) {
  return value ? cell_number(*value, format) : std::string(kNotAvailable);
}

// A value by `format` (a function of the value), or "N.A.".
template <typename Format>
std::string optional_cell(const std::optional<double>& value, Format format) {
  return value ? format(*value) : std::string(kNotAvailable);
}

// The column formats of a table's rows (a block of report --by set side by side, as Markdown and
// LaTeX do, is a table of its own), or of every block's rows of a factor report (HTML stacks the
// levels in the same columns: one format per column across them).
inline ColumnFormats table_formats(const ReportTable& table, const ExporterOptions& options) {
  std::vector<const ReportRow*> rows;
  for (const auto& row : table.rows) rows.push_back(&row);
  return column_formats(rows, options);
}
inline ColumnFormats factor_formats(const FactorReport& report, const ExporterOptions& options) {
  std::vector<const ReportRow*> rows;
  for (const auto& block : report.blocks)
    for (const auto& row : block.rows) rows.push_back(&row);
  return column_formats(rows, options);
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
                                  std::string_view pairwise = "Tukey", bool weak = false,
                                  bool stop = false) {
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
  // Weak scaling names its measures for what they are (ReportTable::weak_scaling).
  add("speedup", fmt::format("{} [{} CI]", weak ? "Scaled speed-up" : "Speed-up", ci));
  add("efficiency", fmt::format("{} [{} CI]", weak ? "Scaled efficiency" : "Efficiency", ci));
  if (accuracy) add("test_accuracy", "Test accuracy");
  if (stop) add("stop", "Runs (stop)");
  columns.first_header = labels.of("condition", "Condition");
  return columns;
}

// The columns of the rows of one or several tables.
inline TableColumns table_columns(const std::vector<const ReportTable*>& tables,
                                  std::string_view unit, double confidence, std::string_view base,
                                  const Labels& labels) {
  bool letters = false, accuracy = false, weak = !tables.empty(), stop = false;
  std::string pairwise;  // the tables' test, or both names when blocks differ
  for (const auto* table : tables) {
    weak = weak && table->weak_scaling;
    for (const auto& row : table->rows) {
      letters = letters || row.letters.has_value();
      accuracy = accuracy || row.mean_test_accuracy.has_value();
      stop = stop || row.stop_reason.has_value();
    }
    if (pairwise.empty())
      pairwise = table->pairwise;
    else if (pairwise != table->pairwise)
      pairwise = "Tukey or Games-Howell";
  }
  return table_columns(unit, confidence, base, letters, accuracy, labels,
                       pairwise.empty() ? "Tukey" : pairwise, weak, stop);
}

// A cell of precision-driven repetitions: its runs, † when stopped at the most runs, and the
// interval's half-width it stopped at ("5, ±1.7%", "12†, ±3.1%", "2, running").
inline std::string stop_cell(const ReportRow& row, std::string_view plus_minus = "±",
                             std::string_view dagger = "†", std::string_view percent = "%") {
  if (!row.stop_reason) return std::string(kNotAvailable);
  const std::string runs = fmt::format("{}{}", row.runs, *row.stop_reason == "max" ? dagger : "");
  if (*row.stop_reason == "running") return runs + ", running";
  if (!row.stop_relative_half_width) return runs;
  return fmt::format("{}, {}{:.1f}{}", runs, plus_minus, *row.stop_relative_half_width * 100,
                     percent);
}

// The text of `row`'s cell in column `key` (a TableColumns key), at the column's format.
inline std::string cell_text(const ReportRow& row, std::string_view key,
                             const ColumnFormats& formats) {
  const auto& format = format_of(formats, key);
  if (key == "epoch_time")
    return with_interval(row.mean_epoch_seconds, row.mean_ci_lower, row.mean_ci_upper, format);
  if (key == "sd") return optional_number(row.sd_epoch_seconds, format);
  if (key == "tukey")
    return row.is_base || !row.tukey_p_vs_base ? std::string(kNotAvailable)
                                               : format_p_value(*row.tukey_p_vs_base);
  if (key == "letters") return row.letters ? *row.letters : std::string(kNotAvailable);
  if (key == "stop") return stop_cell(row);
  if (key == "images_per_second")
    return row.images_per_second ? with_interval(*row.images_per_second, row.images_ci_lower,
                                                 row.images_ci_upper, format)
                                 : std::string(kNotAvailable);
  if (key == "speedup")
    return row.speedup_vs_base ? with_interval(*row.speedup_vs_base, row.speedup_ci_lower,
                                               row.speedup_ci_upper, format)
                               : std::string(kNotAvailable);
  if (key == "efficiency")
    return row.scaling_efficiency ? with_interval(*row.scaling_efficiency, row.efficiency_ci_lower,
                                                  row.efficiency_ci_upper, format)
                                  : std::string(kNotAvailable);
  if (key == "test_accuracy") return optional_number(row.mean_test_accuracy, format);
  return std::string(kNotAvailable);
}

// The cells of `row` in `columns`' order.
inline std::vector<std::string> row_cells(const ReportRow& row, const TableColumns& columns,
                                          const ColumnFormats& formats) {
  std::vector<std::string> cells;
  for (const auto& key : columns.keys) cells.push_back(cell_text(row, key, formats));
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
// The report's notes, then its blocks': a note every level has alike is said once, one some
// levels share names them together ("model vgg16, resnet50: ..."), so five levels never repeat a
// note five times.
inline std::vector<std::string> factor_report_notes(const FactorReport& report) {
  std::vector<std::string> notes = report.notes;
  std::vector<std::pair<std::string, std::vector<std::size_t>>> said;  // note, its levels
  for (std::size_t b = 0; b < report.blocks.size(); ++b)
    for (const auto& note : report.blocks[b].notes) {
      if (note.rfind("Unit of analysis", 0) == 0) continue;
      const auto it = std::find_if(said.begin(), said.end(),
                                   [&](const auto& entry) { return entry.first == note; });
      if (it == said.end())
        said.push_back({note, {b}});
      else
        it->second.push_back(b);
    }
  for (const auto& [note, blocks] : said) {
    if (blocks.size() == report.blocks.size() && blocks.size() > 1) {
      notes.push_back(note);
      continue;
    }
    std::vector<std::string> levels;
    for (const auto b : blocks)
      levels.push_back(report.labels.empty()
                           ? report.levels[b]
                           : report.labels.level_with_factor(report.factor, report.levels[b]));
    notes.push_back(report.labels.empty()
                        ? fmt::format("{} {}: {}", report.factor, fmt::join(levels, ", "), note)
                        : fmt::format("{}: {}", fmt::join(levels, "; "), note));
  }
  return notes;
}

}  // namespace scalebench::report
