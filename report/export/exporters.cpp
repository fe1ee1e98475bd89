// The exporter registry: the only place that lists the formats.
#include "report/export/exporters.hpp"

#include <fmt/format.h>

namespace scalebench::report {

TableExporter::~TableExporter() = default;

namespace {

struct ExporterEntry {
  std::string_view name;
  std::unique_ptr<TableExporter> (*make)();
};

constexpr ExporterEntry kExporters[] = {
    {"markdown", [] { return std::unique_ptr<TableExporter>(new MarkdownExporter); }},
    {"csv", [] { return std::unique_ptr<TableExporter>(new CsvExporter); }},
    {"json", [] { return std::unique_ptr<TableExporter>(new JsonExporter); }},
    {"latex", [] { return std::unique_ptr<TableExporter>(new LatexExporter); }},
    {"html", [] { return std::unique_ptr<TableExporter>(new HtmlExporter); }},
};

}  // namespace

std::unique_ptr<TableExporter> make_exporter(std::string_view format) {
  for (const auto& entry : kExporters) {
    if (entry.name == format) return entry.make();
  }
  std::string known;
  for (const auto& entry : kExporters)
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  throw ReportError(fmt::format("unknown report format '{}': known formats are {}", format, known));
}

std::vector<std::string> exporter_names() {
  std::vector<std::string> names;
  for (const auto& entry : kExporters) names.emplace_back(entry.name);
  return names;
}

}  // namespace scalebench::report
