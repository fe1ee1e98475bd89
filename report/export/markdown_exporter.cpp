#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/export/exporters.hpp"
#include "report/export/format.hpp"
#include "report/export/markup.hpp"
#include "report/export/table_cells.hpp"
#include "util/text.hpp"

namespace scalebench::report {

// A pipe inside a cell would end it; a line break would end the row. Control and bidi characters
// (a crafted name's ESC ] OSC title, U+202E) are shown as escapes: the report goes to terminals.
std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return util::escape_controls(out);
}

// Text outside a table (notes): line breaks kept as spaces, controls escaped.
std::string markdown_text(std::string_view text) {
  std::string out(text);
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\r', ' ');
  return util::escape_controls(out);
}

namespace {

// The provenance header block: one bullet per key (docs/database.md, "provenance").
std::string provenance_block(const db::Provenance& provenance) {
  if (provenance.empty()) return "";
  std::string out = "- Provenance (table `run_provenance` per run):\n";
  for (const auto& [key, value] : provenance)
    out += fmt::format("  - {}: {}\n", markdown_cell(key), markdown_cell(value));
  return out;
}

std::string format_anova(const AnovaSummary& anova) {
  const std::string f =
      std::isfinite(anova.f) ? fmt::format("{:.2f}", anova.f) : fmt::format("{}", anova.f);
  return fmt::format("F={}, d.f.=({:g}, {:g}), {}", f, anova.df_between, anova.df_within,
                     format_p_value(anova.p));
}

std::string format_anova_cell(const ReportTable& block) {
  return block.anova ? format_anova(*block.anova) : std::string(kNotAvailable);
}

std::string optional_f(const std::optional<double>& f) {
  return f ? fmt::format("{:.2f}", *f) : std::string(kNotAvailable);
}

}  // namespace

std::string MarkdownExporter::render(const FactorReport& report) const {
  std::size_t epochs = 0, runs = 0;
  for (const auto& block : report.blocks)
    for (const auto& row : block.rows) epochs += row.epochs, runs += row.runs;
  std::string out;
  out += fmt::format("## Experiment {} by {}\n\n", markdown_cell(report.experiment),
                     markdown_cell(report.factor));
  out +=
      fmt::format("- Unit of analysis: {} ({} epochs from {} runs)\n", report.unit, epochs, runs);
  out += fmt::format("- Column blocks: {} = {}\n", markdown_cell(report.factor),
                     markdown_cell(fmt::format("{}", fmt::join(report.levels, ", "))));
  std::vector<std::string> bases;
  for (std::size_t b = 0; b < report.blocks.size(); ++b)
    bases.push_back(fmt::format("{} in {}", report.blocks[b].base_label, report.levels[b]));
  out += fmt::format("- Base row of each block: {}\n",
                     markdown_cell(fmt::format("{}", fmt::join(bases, "; "))));
  out += provenance_block(report.provenance) + "\n";

  bool accuracy = false;
  for (const auto& block : report.blocks)
    for (const auto& row : block.rows) accuracy = accuracy || row.mean_test_accuracy;
  const std::string accuracy_gap = accuracy ? " |" : "";
  out += "| |";
  for (const auto& level : report.levels)
    out += fmt::format(
        " {0} Avg. epoch time (s) [{1} CI] | {0} {2} | {0} Tukey vs base | {0} Images/s | "
        "{0} Speed-up [{1} CI] | {0} Efficiency |{3}",
        markdown_cell(level),
        percent_of(report.blocks.empty() ? 0.95 : report.blocks[0].confidence),
        sd_header(report.unit),
        accuracy ? fmt::format(" {} Test accuracy |", markdown_cell(level)) : "");
  out += "\n| :--- |";
  for (std::size_t b = 0; b < report.levels.size(); ++b)
    out += fmt::format(" ---: | ---: | ---: | ---: | ---: | ---: |{}", accuracy ? " ---: |" : "");
  out += "\n";
  for (const auto& key : report.row_keys) {
    out += fmt::format("| {} |", markdown_cell(key));
    for (const auto& block : report.blocks) {
      const auto row = std::find_if(block.rows.begin(), block.rows.end(),
                                    [&](const ReportRow& r) { return r.label == key; });
      if (row == block.rows.end()) {
        out += fmt::format(" — | — | — | — | — | — |{}", accuracy ? " — |" : "");
        continue;
      }
      out += fmt::format(" {} | {} | {} | {} | {} | {} |", mean_cell(*row),
                         optional_cell(row->sd_epoch_seconds, format_measure),
                         row->is_base ? std::string(kNotAvailable)
                                      : optional_cell(row->tukey_p_vs_base, format_p_value),
                         optional_cell(row->images_per_second, format_measure), speedup_cell(*row),
                         optional_cell(row->scaling_efficiency, format_percent));
      if (accuracy)
        out += fmt::format(" {} |", optional_cell(row->mean_test_accuracy, format_percent));
    }
    out += "\n";
  }
  out += "| ANOVA |";
  for (const auto& block : report.blocks)
    out += fmt::format(" {} | | | | | |{}", format_anova_cell(block), accuracy_gap);
  out += "\n";

  for (const auto& anova : report.two_way) {
    out += fmt::format("\nTwo-way ANOVA of {}, {}: {} ({} {}s, type {} sums of squares)\n\n",
                       markdown_cell(anova.scope),
                       report.unit == "epoch" ? "epoch time" : "run mean epoch time",
                       markdown_cell(anova.model), anova.observations,
                       report.unit == "epoch" ? "epoch" : "run", anova.ss_type);
    out += "| Effect | Df | Sum Sq | Mean Sq | F | p | partial η² |\n";
    out += "| :--- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& term : anova.terms) {
      if (term.term == "Residuals") {
        out += fmt::format("| Residuals | {:g} | {} | {} | | | |\n", term.df,
                           format_measure(term.ss), format_measure(term.ms));
        continue;
      }
      out += fmt::format(
          "| {} | {:g} | {} | {} | {} | {} | {} |\n", markdown_cell(term.term), term.df,
          format_measure(term.ss), format_measure(term.ms), optional_f(term.f),
          optional_cell(term.p, format_p_value),
          optional_cell(term.partial_eta_sq, [](double v) { return fmt::format("{:.3f}", v); }));
    }
  }

  if (!report.bandwidth.empty()) {
    out += fmt::format(
        "\nAllreduce benchmark runs of the same instance, by {} (bus bandwidth, GB/s; "
        "docs/allreduce-benchmark.md)\n\n",
        markdown_cell(report.factor));
    out += fmt::format(
        "| {} | Condition | Largest message (bytes) | busbw there | time there (µs) | Avg. busbw "
        "over sizes | Runs |\n",
        markdown_cell(report.factor));
    out += "| :--- | :--- | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& row : report.bandwidth)
      out += fmt::format("| {} | {} np={} | {} | {:.3f} | {} | {:.3f} | {} |\n",
                         markdown_cell(row.level), markdown_cell(row.condition), row.np, row.bytes,
                         row.busbw_gbs, format_measure(row.time_us), row.avg_busbw_gbs, row.runs);
  }

  const std::vector<std::string> notes = factor_report_notes(report);
  if (!notes.empty()) {
    out += "\nNotes:\n\n";
    for (const auto& note : notes) out += fmt::format("- {}\n", markdown_text(note));
  }
  return out;
}

std::string MarkdownExporter::render(const ReportTable& table) const {
  std::size_t epochs = 0;
  std::size_t runs = 0;
  for (const auto& row : table.rows) {
    epochs += row.epochs;
    runs += row.runs;
  }
  std::string out;
  out += fmt::format("## Experiment {}\n\n", markdown_cell(table.experiment));
  out += fmt::format("- Unit of analysis: {} ({} epochs from {} runs in {} groups)\n", table.unit,
                     epochs, runs, table.rows.size());
  out += fmt::format("- Base group: {}\n", markdown_cell(table.base_label));
  out += provenance_block(table.provenance) + "\n";

  // Test accuracy only where a program reported one (our test_accuracy, Keras's val_accuracy).
  const bool accuracy = std::any_of(table.rows.begin(), table.rows.end(),
                                    [](const ReportRow& r) { return r.mean_test_accuracy; });
  out += fmt::format(
      "| Condition | Avg. epoch time (s) [{0} CI] | {1} | Tukey vs {2} | Images/s | Speed-up "
      "[{0} CI] | Efficiency |{3}\n",
      percent_of(table.confidence), sd_header(table.unit), markdown_cell(table.base_label),
      accuracy ? " Test accuracy |" : "");
  out += fmt::format("| :--- | ---: | ---: | ---: | ---: | ---: | ---: |{}\n",
                     accuracy ? " ---: |" : "");
  for (const auto& row : table.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |{}\n", markdown_cell(row.label),
                       mean_cell(row), optional_cell(row.sd_epoch_seconds, format_measure),
                       row.is_base ? std::string(kNotAvailable)
                                   : optional_cell(row.tukey_p_vs_base, format_p_value),
                       optional_cell(row.images_per_second, format_measure), speedup_cell(row),
                       optional_cell(row.scaling_efficiency, format_percent),
                       accuracy ? " " + optional_cell(row.mean_test_accuracy, format_percent) + " |"
                                : std::string());
  }
  if (table.anova)
    out += fmt::format("| ANOVA | {} | | | | | |{}\n", format_anova(*table.anova),
                       accuracy ? " |" : "");

  if (!table.notes.empty()) {
    out += "\nNotes:\n\n";
    for (const auto& note : table.notes) out += fmt::format("- {}\n", markdown_text(note));
  }
  return out;
}

}  // namespace scalebench::report
