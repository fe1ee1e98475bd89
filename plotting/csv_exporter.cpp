#include <fmt/format.h>

#include "plotting/exporters.hpp"
#include "plotting/format.hpp"

namespace scalebench::plotting {
namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number(const std::optional<double>& value) {
  return value ? format_exact(*value) : std::string();
}

}  // namespace

std::string CsvExporter::render(const ReportTable& table) const {
  std::string out =
      "label,condition,launcher,np,runs,epochs,mean_epoch_seconds,sd_epoch_seconds,"
      "tukey_p_vs_base,images_per_second,speedup_vs_base,scaling_efficiency,is_base\n";
  for (const auto& row : table.rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", field(row.label),
                       field(row.condition), field(row.launcher), row.np, row.runs, row.epochs,
                       format_exact(row.mean_epoch_seconds), number(row.sd_epoch_seconds),
                       number(row.tukey_p_vs_base), number(row.images_per_second),
                       number(row.speedup_vs_base), number(row.scaling_efficiency),
                       row.is_base ? "true" : "false");
  }
  return out;
}

}  // namespace scalebench::plotting
