#include <fmt/format.h>

#include <cmath>

#include "plotting/exporters.hpp"
#include "plotting/format.hpp"

namespace scalebench::plotting {
namespace {

// A pipe inside a cell would end it.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

template <typename Format>
std::string optional_cell(const std::optional<double>& value, Format format) {
  return value ? format(*value) : std::string(kNotAvailable);
}

std::string format_anova(const AnovaSummary& anova) {
  const std::string f =
      std::isfinite(anova.f) ? fmt::format("{:.2f}", anova.f) : fmt::format("{}", anova.f);
  return fmt::format("F={}, d.f.=({:g}, {:g}), {}", f, anova.df_between, anova.df_within,
                     format_p_value(anova.p));
}

}  // namespace

std::string MarkdownExporter::render(const ReportTable& table) const {
  std::size_t epochs = 0;
  std::size_t runs = 0;
  for (const auto& row : table.rows) {
    epochs += row.epochs;
    runs += row.runs;
  }
  std::string out;
  out += fmt::format("## Experiment {}\n\n", cell(table.experiment));
  out += fmt::format("- Unit of analysis: {} ({} {}s from {} runs in {} groups)\n", table.unit,
                     epochs, table.unit, runs, table.rows.size());
  out += fmt::format("- Base group: {}\n\n", cell(table.base_label));

  out += fmt::format(
      "| Condition | Avg. {0} time (s) | Std. {0} time (s) | Tukey vs {1} | Images/s | Speed-up "
      "| Efficiency |\n",
      table.unit, cell(table.base_label));
  out += "| :--- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& row : table.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", cell(row.label),
                       format_measure(row.mean_epoch_seconds),
                       optional_cell(row.sd_epoch_seconds, format_measure),
                       row.is_base ? std::string(kNotAvailable)
                                   : optional_cell(row.tukey_p_vs_base, format_p_value),
                       optional_cell(row.images_per_second, format_measure),
                       optional_cell(row.speedup_vs_base, format_ratio),
                       optional_cell(row.scaling_efficiency, format_percent));
  }
  if (table.anova) out += fmt::format("| ANOVA | {} | | | | | |\n", format_anova(*table.anova));

  if (!table.notes.empty()) {
    out += "\nNotes:\n\n";
    for (const auto& note : table.notes) out += fmt::format("- {}\n", note);
  }
  return out;
}

}  // namespace scalebench::plotting
