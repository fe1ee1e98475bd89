// The exporter registry: the only place that lists the formats.
#include "report/export/exporters.hpp"

#include <fmt/format.h>

#include "report/export/column_format.hpp"

namespace scalebench::report {

TableExporter::~TableExporter() = default;

namespace {

struct ExporterEntry {
  std::string_view name;
  std::unique_ptr<TableExporter> (*make)(const ExporterOptions&);
};

constexpr ExporterEntry kExporters[] = {
    {"markdown",
     [](const ExporterOptions& options) {
       return std::unique_ptr<TableExporter>(new MarkdownExporter(options));
     }},
    {"csv", [](const ExporterOptions&) { return std::unique_ptr<TableExporter>(new CsvExporter); }},
    {"json",
     [](const ExporterOptions&) { return std::unique_ptr<TableExporter>(new JsonExporter); }},
    {"latex",
     [](const ExporterOptions& options) {
       return std::unique_ptr<TableExporter>(new LatexExporter(options));
     }},
    {"html",
     [](const ExporterOptions& options) {
       return std::unique_ptr<TableExporter>(new HtmlExporter(options));
     }},
};

}  // namespace

std::unique_ptr<TableExporter> make_exporter(std::string_view format,
                                             const ExporterOptions& options) {
  for (const auto& entry : kExporters) {
    if (entry.name != format) continue;
    check_number_options(options);  // every format: a bad value is an error even where unused
    return entry.make(options);
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
