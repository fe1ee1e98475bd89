// The report as one self-contained HTML page: the table, the scaling figure as inline SVG (when
// the report carries one), provenance and notes; CSS inline, no JavaScript, nothing fetched.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/export/column_format.hpp"
#include "report/export/exporters.hpp"
#include "report/export/format.hpp"
#include "report/export/markup.hpp"
#include "report/export/table_cells.hpp"

namespace scalebench::report {

// Text into HTML: the five markup characters as entities, control characters dropped.
std::string html(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7F)
          out += c;
        else if (c == '\n' || c == '\t')
          out += ' ';
    }
  }
  return out;
}

// The SVG element of a gnuplot file, without its XML prolog and DOCTYPE (not allowed inline),
// and with any <script> element removed (none without gnuplot's "mouse" option; the page runs
// no code either way).
std::string inline_svg(const std::string& svg) {
  const auto start = svg.find("<svg");
  if (start == std::string::npos) return "";
  std::string out = svg.substr(start);
  for (auto open = out.find("<script"); open != std::string::npos; open = out.find("<script")) {
    const auto close = out.find("</script>", open);
    out.erase(open, close == std::string::npos ? std::string::npos : close + 9 - open);
  }
  return out;
}

namespace {

constexpr std::string_view kStyle = R"(<style>
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; }
h1 { font-size: 1.4em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.3em 0.8em; text-align: right; border-bottom: 1px solid #ddd; }
td { white-space: nowrap; }
div.scroll { overflow-x: auto; max-width: 100%; }
tr.anova td + td, tr.block td { text-align: left; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #444; }
tr.anova td, tr.block td { font-style: italic; background: #f6f6f6; }
caption { caption-side: top; text-align: left; font-weight: bold; margin-bottom: 0.4em; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.1em 1em; font-size: 0.9em; }
dt { font-weight: bold; }
figure { margin: 1.5em 0; }
figure svg { max-width: 100%; height: auto; }
.notes { font-size: 0.9em; color: #444; }
</style>
)";

}  // namespace

std::string page_head(const std::string& title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>{}</title>\n{}</head>\n<body>\n",
      html(title), kStyle);
}

namespace {

std::string provenance_list(const Provenance& provenance) {
  if (provenance.empty()) return "";
  std::string out = "<h2>Provenance</h2>\n<dl class=\"provenance\">\n";
  for (const auto& [key, value] : provenance)
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", html(key), html(value));
  return out + "</dl>\n";
}

}  // namespace

std::string notes_list(const std::vector<std::string>& notes) {
  if (notes.empty()) return "";
  std::string out = "<h2>Notes</h2>\n<ul class=\"notes\">\n";
  for (const auto& note : notes) out += fmt::format("<li>{}</li>\n", html(note));
  return out + "</ul>\n";
}

std::string figure_block(const std::string& svg, const std::string& caption) {
  const auto element = inline_svg(svg);
  if (element.empty()) return "";
  return fmt::format("<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n", element,
                     html(caption));
}

namespace {

std::string anova_text(const AnovaSummary& a) {
  const auto f = std::isfinite(a.f) ? fmt::format("{:.2f}", a.f) : fmt::format("{}", a.f);
  return fmt::format("{}F({:g}, {:.3g}) = {}, {}", a.welch ? "Welch " : "", a.df_between,
                     a.df_within, f, format_p_value(a.p));
}

std::string header_cells(const TableColumns& columns) {
  std::string out = fmt::format("<tr><th>{}</th>", html(columns.first_header));
  for (const auto& h : columns.headers) out += fmt::format("<th>{}</th>", html(h));
  return out + "</tr>\n";
}

// A cell's text into HTML, its thousands separator (U+202F) as the entity "&#8239;".
std::string html_cell(const std::string& cell) {
  auto out = html(cell);
  for (auto at = out.find(kNarrowSpace); at != std::string::npos; at = out.find(kNarrowSpace, at))
    out.replace(at, kNarrowSpace.size(), "&#8239;");
  return out;
}

std::string row_html(const ReportRow& row, const TableColumns& columns, const Labels& labels,
                     const ColumnFormats& formats) {
  std::string out = fmt::format("<tr><td>{}</td>", html(display_label(row, labels)));
  for (const auto& cell : row_cells(row, columns, formats))
    out += fmt::format("<td>{}</td>", html_cell(cell));
  return out + "</tr>\n";
}

}  // namespace

HtmlExporter::HtmlExporter(const ExporterOptions& options) : options_(options) {
  check_number_options(options);
}

std::string HtmlExporter::render(const ReportTable& table) const {
  const auto columns =
      table_columns({&table}, table.unit, table.confidence, base_display(table), table.labels);
  const auto formats = table_formats(table, options_);
  const auto& headers = columns.headers;
  std::size_t runs = 0, epochs = 0;
  for (const auto& row : table.rows) runs += row.runs, epochs += row.epochs;

  const auto experiment = table.labels.experiment(table.experiment);
  std::string out = page_head("scalebench: " + experiment);
  out += fmt::format("<h1>Experiment {}</h1>\n<ul>\n", html(experiment));
  out += fmt::format("<li>Unit of analysis: {} ({} epochs from {} runs in {} groups)</li>\n",
                     html(table.unit), epochs, runs, table.rows.size());
  out += fmt::format("<li>Base group: {}</li>\n</ul>\n", html(table.base_label));
  out += "<div class=\"scroll\"><table class=\"report\">\n";
  out += fmt::format("<caption>Epoch time by group ({} confidence intervals)</caption>\n",
                     html(percent_of(table.confidence)));
  out += "<thead>\n" + header_cells(columns) + "</thead>\n<tbody>\n";
  for (const auto& row : table.rows) out += row_html(row, columns, table.labels, formats);
  if (table.anova)
    out += fmt::format("<tr class=\"anova\"><td>ANOVA</td><td colspan=\"{}\">{}</td></tr>\n",
                       headers.size(), html(anova_text(*table.anova)));
  out += "</tbody>\n</table></div>\n";
  out += figure_block(table.figure_svg,
                      fmt::format("Scaling of {}: mean epoch time (error bars: {} CI, unit {}) "
                                  "and images/s with linear scaling.",
                                  table.experiment, percent_of(table.confidence), table.unit));
  out += provenance_list(table.provenance);
  out += notes_list(table.notes);
  return out + "</body>\n</html>\n";
}

std::string HtmlExporter::render(const FactorReport& report) const {
  const double confidence = report.blocks.empty() ? 0.95 : report.blocks[0].confidence;
  const auto columns = factor_columns(report);
  const auto formats = factor_formats(report, options_);
  const auto& headers = columns.headers;

  const auto experiment = report.labels.experiment(report.experiment);
  std::string out = page_head("scalebench: " + experiment + " by " + report.factor);
  out += fmt::format("<h1>Experiment {} by {}</h1>\n<ul>\n", html(experiment), html(report.factor));
  out += fmt::format("<li>Unit of analysis: {}</li>\n", html(report.unit));
  out += fmt::format("<li>Column blocks: {} = {}</li>\n</ul>\n", html(report.factor),
                     html(fmt::format("{}", fmt::join(report.levels, ", "))));
  out += "<div class=\"scroll\"><table class=\"report\">\n";
  out += fmt::format("<caption>Epoch time by {} and group ({} confidence intervals)</caption>\n",
                     html(report.factor), html(percent_of(confidence)));
  out += "<thead>\n" + header_cells(columns) + "</thead>\n<tbody>\n";
  for (std::size_t b = 0; b < report.blocks.size(); ++b) {
    const auto& block = report.blocks[b];
    out += fmt::format("<tr class=\"block\"><td colspan=\"{}\">{} = {} (base {}){}</td></tr>\n",
                       headers.size() + 1, html(report.labels.factor(report.factor)),
                       html(report.labels.level(report.factor, report.levels[b])),
                       html(base_display(block)),
                       block.anova ? html("; ANOVA " + anova_text(*block.anova)) : "");
    for (const auto& row : block.rows) out += row_html(row, columns, report.labels, formats);
  }
  out += "</tbody>\n</table></div>\n";
  for (const auto& anova : report.two_way) {
    out += fmt::format(
        "<div class=\"scroll\"><table class=\"two-way\">\n<caption>Two-way ANOVA of {}: {} ({} "
        "observations, type {} "
        "sums of squares)</caption>\n",
        html(anova.scope), html(anova.model), anova.observations, html(anova.ss_type));
    out +=
        "<thead><tr><th>Effect</th><th>Df</th><th>Sum Sq</th><th>Mean Sq</th><th>F</th>"
        "<th>p</th><th>partial η²</th></tr></thead>\n<tbody>\n";
    for (const auto& term : anova.terms)
      out += fmt::format(
          "<tr><td>{}</td><td>{:g}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "</tr>\n",
          html(term.term), term.df, format_measure(term.ss), format_measure(term.ms),
          term.f ? fmt::format("{:.2f}", *term.f) : "", term.p ? format_p_value(*term.p) : "",
          term.partial_eta_sq ? fmt::format("{:.3f}", *term.partial_eta_sq) : "");
    out += "</tbody>\n</table></div>\n";
  }
  out += figure_block(report.figure_svg, fmt::format("{} by {}: one curve per level.",
                                                     report.experiment, report.factor));
  out += provenance_list(report.provenance);
  const std::vector<std::string> notes = factor_report_notes(report);
  out += notes_list(notes);
  return out + "</body>\n</html>\n";
}

}  // namespace scalebench::report
