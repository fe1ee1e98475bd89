#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/export/column_format.hpp"
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
std::string provenance_block(const Provenance& provenance) {
  if (provenance.empty()) return "";
  std::string out = "- Provenance (table `run_provenance` per run):\n";
  for (const auto& [key, value] : provenance)
    out += fmt::format("  - {}: {}\n", markdown_cell(key), markdown_cell(value));
  return out;
}

std::string format_anova(const AnovaSummary& anova) {
  const std::string f =
      std::isfinite(anova.f) ? fmt::format("{:.2f}", anova.f) : fmt::format("{}", anova.f);
  return fmt::format("{}F={}, d.f.=({:g}, {:.3g}), {}", anova.welch ? "Welch " : "", f,
                     anova.df_between, anova.df_within, format_p_value(anova.p));
}

std::string format_anova_cell(const ReportTable& block) {
  return block.anova ? format_anova(*block.anova) : std::string(kNotAvailable);
}

std::string optional_f(const std::optional<double>& f) {
  return f ? fmt::format("{:.2f}", *f) : std::string(kNotAvailable);
}

}  // namespace

MarkdownExporter::MarkdownExporter(const ExporterOptions& options) : options_(options) {
  check_number_options(options);
}

// The side-by-side table of levels [first, last): a column block per level.
std::string MarkdownExporter::level_blocks(const FactorReport& report, std::size_t first,
                                           std::size_t last) const {
  const auto columns = factor_columns(report);
  const std::size_t width = columns.keys.size();
  std::string out = report.labels.empty()
                        ? std::string("| |")
                        : fmt::format("| {} |", markdown_cell(columns.first_header));
  for (std::size_t b = first; b < last; ++b)
    for (const auto& header : columns.headers)
      out += fmt::format(" {} {} |",
                         markdown_cell(report.labels.level(report.factor, report.levels[b])),
                         markdown_cell(header));
  out += "\n| :--- |";
  for (std::size_t b = 0; b < (last - first) * width; ++b) out += " ---: |";
  out += "\n";
  for (const auto& key : report.row_keys) {
    out += fmt::format("| {} |", markdown_cell(row_key_display(report, key)));
    for (std::size_t b = first; b < last; ++b) {
      const auto& block = report.blocks[b];
      const auto row = std::find_if(block.rows.begin(), block.rows.end(),
                                    [&](const ReportRow& r) { return r.label == key; });
      const auto formats = table_formats(block, options_);  // a block's columns are its own
      for (std::size_t c = 0; c < width; ++c)
        out += row == block.rows.end()
                   ? std::string(" — |")
                   : fmt::format(" {} |", markdown_cell(cell_text(*row, columns.keys[c], formats)));
    }
    out += "\n";
  }
  out += "| ANOVA |";
  for (std::size_t b = first; b < last; ++b) {
    out += fmt::format(" {} |", format_anova_cell(report.blocks[b]));
    for (std::size_t c = 1; c < width; ++c) out += " |";
  }
  return out + "\n";
}

std::string MarkdownExporter::render(const FactorReport& report) const {
  std::size_t epochs = 0, runs = 0;
  for (const auto& block : report.blocks)
    for (const auto& row : block.rows) epochs += row.epochs, runs += row.runs;
  std::string out;
  out += fmt::format("## Experiment {} by {}\n\n",
                     markdown_cell(report.labels.experiment(report.experiment)),
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

  // kLevelsSideBySide levels per table; more follow in tables of their own, one under another.
  for (std::size_t first = 0; first < report.blocks.size(); first += kLevelsSideBySide) {
    if (first > 0) out += "\n";
    out += level_blocks(report, first, std::min(report.blocks.size(), first + kLevelsSideBySide));
  }

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
  out +=
      fmt::format("## Experiment {}\n\n", markdown_cell(table.labels.experiment(table.experiment)));
  out += fmt::format("- Unit of analysis: {} ({} epochs from {} runs in {} groups)\n", table.unit,
                     epochs, runs, table.rows.size());
  out += fmt::format("- Base group: {}\n", markdown_cell(table.base_label));
  out += provenance_block(table.provenance) + "\n";

  // Test accuracy only where a program reported one (our test_accuracy, Keras's val_accuracy).
  const auto columns =
      table_columns({&table}, table.unit, table.confidence, base_display(table), table.labels);
  const auto formats = table_formats(table, options_);
  out += fmt::format("| {} |", markdown_cell(columns.first_header));
  for (const auto& header : columns.headers) out += fmt::format(" {} |", markdown_cell(header));
  out += "\n| :--- |";
  for (std::size_t c = 0; c < columns.keys.size(); ++c) out += " ---: |";
  out += "\n";
  for (const auto& row : table.rows) {
    out += fmt::format("| {} |", markdown_cell(display_label(row, table.labels)));
    for (const auto& cell : row_cells(row, columns, formats))
      out += fmt::format(" {} |", markdown_cell(cell));
    out += "\n";
  }
  if (table.anova) {
    out += fmt::format("| ANOVA | {} |", format_anova(*table.anova));
    for (std::size_t c = 1; c < columns.keys.size(); ++c) out += " |";
    out += "\n";
  }

  if (!table.notes.empty()) {
    out += "\nNotes:\n\n";
    for (const auto& note : table.notes) out += fmt::format("- {}\n", markdown_text(note));
  }
  return out;
}

}  // namespace scalebench::report
