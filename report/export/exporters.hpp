// The table exporters, one class per format behind TableExporter; make_exporter is the way to
// get one.
#pragma once

#include <memory>
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

// "markdown", "csv" or "json"; anything else throws ReportError naming the known formats.
std::unique_ptr<TableExporter> make_exporter(std::string_view format);
std::vector<std::string> exporter_names();

// The paper's Table 1 layout: a header block, one row per group, an ANOVA row, then the notes.
class MarkdownExporter final : public TableExporter {
 public:
  std::string render(const ReportTable& table) const override;
  std::string render(const FactorReport& report) const override;
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

// A table for papers: booktabs, plain tabular, p-values in math mode, a caption with the unit of
// analysis and the base; needs only \usepackage{booktabs}.
class LatexExporter final : public TableExporter {
 public:
  std::string render(const ReportTable& table) const override;
  std::string render(const FactorReport& report) const override;
};

// One self-contained page (inline CSS, the figure as inline SVG when the report carries one,
// provenance, notes); no JavaScript, nothing fetched.
class HtmlExporter final : public TableExporter {
 public:
  std::string render(const ReportTable& table) const override;
  std::string render(const FactorReport& report) const override;
};

}  // namespace scalebench::report
