// The table exporters, one class per format behind TableExporter; make_exporter is the way to
// get one.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/analysis/report.hpp"

namespace scalebench::report {

// One implementation per output format.
class TableExporter {
 public:
  virtual ~TableExporter();
  virtual std::string render(const ReportTable& table) const = 0;
  virtual std::string render(const FactorReport& report) const = 0;
};

// report --by: how many levels' column blocks sit side by side in one table (Markdown, LaTeX);
// more are split into further tables under it, each as wide as a page's text at most.
inline constexpr std::size_t kLevelsSideBySide = 2;

// Settings of the exporters that have any (report and paper --digits, --decimals): how the
// Markdown, LaTeX and HTML tables round their numbers (column_format.hpp; docs/report.md,
// "Decimals"). CSV and JSON ignore them: their numbers are exact.
struct ExporterOptions {
  // Significant figures of the smallest value of every measured column (times, images/s,
  // speed-ups, efficiency and test accuracy in percent), which sets the column's decimals; absent:
  // each column's own rule. 1 to 15.
  std::optional<int> digits = std::nullopt;
  // COLUMN -> N: exactly N decimals in that column (a key of decimal_columns()), before --digits
  // and the rule. N from 0 to 10.
  std::map<std::string, int> decimals = {};
};

// "markdown", "csv", "json", "latex" or "html"; anything else throws ReportError naming the known
// formats, as does an ExporterOptions value out of range.
std::unique_ptr<TableExporter> make_exporter(std::string_view format,
                                             const ExporterOptions& options = {});
std::vector<std::string> exporter_names();

// The paper's Table 1 layout: a header block, one row per group, an ANOVA row, then the notes.
class MarkdownExporter final : public TableExporter {
 public:
  MarkdownExporter() = default;
  // Throws ReportError for options out of range (check_number_options).
  explicit MarkdownExporter(const ExporterOptions& options);
  std::string render(const ReportTable& table) const override;
  std::string render(const FactorReport& report) const override;

 private:
  std::string level_blocks(const FactorReport& report, std::size_t first, std::size_t last) const;
  ExporterOptions options_;
};

// One header line and one line per row; RFC 4180 quoting, "\n" line ends, absent = empty field,
// numbers at full precision.
class CsvExporter final : public TableExporter {
 public:
  std::string render(const ReportTable& table) const override;
  std::string render(const FactorReport& report) const override;
};

// The whole table, ANOVA and notes included, with stable keys; absent values are null.
class JsonExporter final : public TableExporter {
 public:
  std::string render(const ReportTable& table) const override;
  std::string render(const FactorReport& report) const override;
};

// A table for papers: booktabs rules, decimal-aligned numbers (dcolumn) rounded to sensible
// figures with thin-space thousands separators, each interval in a row under its value, a caption
// with the unit of analysis and the base, a unique label, short notes (the long ones, the
// provenance and the timestamps as % comments); --by sets the levels side by side in one tabular.
// Needs \usepackage{booktabs,dcolumn,graphicx} (docs/report.md).
class LatexExporter final : public TableExporter {
 public:
  LatexExporter() = default;
  // Throws ReportError for options out of range (check_number_options).
  explicit LatexExporter(const ExporterOptions& options);
  std::string render(const ReportTable& table) const override;
  std::string render(const FactorReport& report) const override;

 private:
  ExporterOptions options_;
};

// One self-contained page (inline CSS, the figure as inline SVG when the report carries one,
// provenance, notes); no JavaScript, nothing fetched.
class HtmlExporter final : public TableExporter {
 public:
  HtmlExporter() = default;
  // Throws ReportError for options out of range (check_number_options).
  explicit HtmlExporter(const ExporterOptions& options);
  std::string render(const ReportTable& table) const override;
  std::string render(const FactorReport& report) const override;

 private:
  ExporterOptions options_;
};

}  // namespace scalebench::report
