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

}  // namespace scalebench::plotting
