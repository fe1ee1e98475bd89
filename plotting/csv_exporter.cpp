#include <fmt/format.h>

#include "plotting/exporters.hpp"
#include "plotting/format.hpp"

namespace scalebench::plotting {
namespace {

std::string number(const std::optional<double>& value) {
  return value ? format_exact(*value) : std::string();
}

}  // namespace

std::string CsvExporter::render(const ReportTable& table) const {
  std::string out =
      "label,condition,launcher,np,runs,epochs,mean_epoch_seconds,sd_epoch_seconds,"
      "tukey_p_vs_base,images_per_second,speedup_vs_base,scaling_efficiency,is_base\n";
  for (const auto& row : table.rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(row.label),
                       csv_field(row.condition), csv_field(row.launcher), row.np, row.runs,
                       row.epochs, format_exact(row.mean_epoch_seconds),
                       number(row.sd_epoch_seconds), number(row.tukey_p_vs_base),
                       number(row.images_per_second), number(row.speedup_vs_base),
                       number(row.scaling_efficiency), row.is_base ? "true" : "false");
  }
  return out;
}

}  // namespace scalebench::plotting
