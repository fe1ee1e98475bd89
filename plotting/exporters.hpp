// The table exporters, one class per format; make_exporter (report.hpp) is the way to get one.
#pragma once

#include "plotting/report.hpp"

namespace scalebench::plotting {

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

}  // namespace scalebench::plotting
