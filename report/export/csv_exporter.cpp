#include <fmt/format.h>

#include "report/export/exporters.hpp"
#include "report/export/format.hpp"

namespace scalebench::report {
namespace {

std::string number(const std::optional<double>& value) {
  return value ? format_exact(*value) : std::string();
}

// The columns added in schema 6's release: unit and the confidence intervals, at the end so that
// readers of the older columns by position keep working.
std::string intervals(const std::string& unit, const ReportRow& row) {
  return fmt::format("{},{},{},{},{}", csv_field(unit), number(row.mean_ci_lower),
                     number(row.mean_ci_upper), number(row.speedup_ci_lower),
                     number(row.speedup_ci_upper));
}

// Issue 26's columns, again at the end: the letters, the images/s and efficiency intervals, and
// the row's label as readers see it (the labels; the stored label without).
constexpr std::string_view kLabelledColumns =
    ",letters,images_ci_lower,images_ci_upper,efficiency_ci_lower,efficiency_ci_upper,"
    "display_label";
constexpr std::string_view kNoLabelledColumns = ",,,,,,";

std::string labelled(const ReportRow& row, const Labels& labels) {
  return fmt::format(",{},{},{},{},{},{}", csv_field(row.letters.value_or("")),
                     number(row.images_ci_lower), number(row.images_ci_upper),
                     number(row.efficiency_ci_lower), number(row.efficiency_ci_upper),
                     csv_field(display_label(row, labels)));
}

}  // namespace

// One tidy table: section "row" (one per block and row), "anova" (each block's one-way ANOVA)
// and "two_way" (the terms of each two-way ANOVA); the columns a section does not use are empty.
std::string CsvExporter::render(const FactorReport& report) const {
  std::string out =
      "section,factor,level,label,condition,launcher,np,runs,epochs,mean_epoch_seconds,"
      "sd_epoch_seconds,tukey_p_vs_base,images_per_second,speedup_vs_base,scaling_efficiency,"
      "is_base,scope,term,df,df_residual,ss,f,p,partial_eta_sq,bytes,busbw_gbs,time_us,"
      "avg_busbw_gbs,test_accuracy,unit,mean_ci_lower,mean_ci_upper,speedup_ci_lower,"
      "speedup_ci_upper";
  out += std::string(kLabelledColumns) + "\n";
  const auto factor = csv_field(report.factor);
  for (std::size_t b = 0; b < report.blocks.size(); ++b) {
    const auto level = csv_field(report.levels[b]);
    for (const auto& row : report.blocks[b].rows)
      out += fmt::format("row,{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},,,,,,,,,,,,,{},{}{}\n",
                         factor, level, csv_field(row.label), csv_field(row.condition),
                         csv_field(row.launcher), row.np, row.runs, row.epochs,
                         format_exact(row.mean_epoch_seconds), number(row.sd_epoch_seconds),
                         number(row.tukey_p_vs_base), number(row.images_per_second),
                         number(row.speedup_vs_base), number(row.scaling_efficiency),
                         row.is_base ? "true" : "false", number(row.mean_test_accuracy),
                         intervals(report.unit, row), labelled(row, report.labels));
    if (const auto& anova = report.blocks[b].anova)
      out += fmt::format("anova,{},{},,,,,,,,,,,,,,,group,{},{},,{},{},,,,,,,,,,,{}\n", factor,
                         level, format_exact(anova->df_between), format_exact(anova->df_within),
                         format_exact(anova->f), format_exact(anova->p), kNoLabelledColumns);
  }
  for (const auto& anova : report.two_way) {
    double df_residual = 0;
    for (const auto& term : anova.terms)
      if (term.term == "Residuals") df_residual = term.df;
    for (const auto& term : anova.terms)
      out += fmt::format("two_way,{},,,,,,,,,,,,,,,{},{},{},{},{},{},{},{},,,,,,,,,,{}\n", factor,
                         csv_field(anova.scope + ": " + anova.model), csv_field(term.term),
                         format_exact(term.df), format_exact(df_residual), format_exact(term.ss),
                         number(term.f), number(term.p), number(term.partial_eta_sq),
                         kNoLabelledColumns);
  }
  for (const auto& row : report.bandwidth)
    out +=
        fmt::format("bandwidth,{},{},,{},{},{},{},,,,,,,,,,,,,,,,,{},{},{},{},,,,,,{}\n", factor,
                    csv_field(row.level), csv_field(row.condition), csv_field(row.launcher), row.np,
                    row.runs, row.bytes, format_exact(row.busbw_gbs), format_exact(row.time_us),
                    format_exact(row.avg_busbw_gbs), kNoLabelledColumns);
  return out;
}

std::string CsvExporter::render(const ReportTable& table) const {
  std::string out =
      "label,condition,launcher,np,runs,epochs,mean_epoch_seconds,sd_epoch_seconds,"
      "tukey_p_vs_base,images_per_second,speedup_vs_base,scaling_efficiency,is_base,"
      "test_accuracy,unit,mean_ci_lower,mean_ci_upper,speedup_ci_lower,speedup_ci_upper";
  out += std::string(kLabelledColumns) + "\n";
  for (const auto& row : table.rows) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}{}\n", csv_field(row.label),
        csv_field(row.condition), csv_field(row.launcher), row.np, row.runs, row.epochs,
        format_exact(row.mean_epoch_seconds), number(row.sd_epoch_seconds),
        number(row.tukey_p_vs_base), number(row.images_per_second), number(row.speedup_vs_base),
        number(row.scaling_efficiency), row.is_base ? "true" : "false",
        number(row.mean_test_accuracy), intervals(table.unit, row), labelled(row, table.labels));
  }
  return out;
}

}  // namespace scalebench::report
