// The report as a LaTeX table for papers: booktabs rules, a plain tabular (no siunitx), p-values in
// math mode, a caption with the unit of analysis, the base and the ANOVA. It compiles with a stock
// TeX Live (texlive-latex-recommended) given \usepackage{booktabs}; tests/plotting compile it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/export/exporters.hpp"
#include "report/export/format.hpp"
#include "report/export/markup.hpp"
#include "report/export/table_cells.hpp"

namespace scalebench::report {
// Text into LaTeX: the ten special characters escaped, control characters dropped, and "<", ">"
// and "|" (which T1-less OT1 fonts print as other glyphs) as math.
std::string tex(std::string_view text) {
  std::string out;
  bool open_quote = true;  // straight double quotes become TeX's opening and closing quotes
  for (const char c : text) {
    switch (c) {
      case '"':
        out += open_quote ? "``" : "''";
        open_quote = !open_quote;
        break;
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '{':
        out += "\\{";
        break;
      case '}':
        out += "\\}";
        break;
      case '$':
        out += "\\$";
        break;
      case '&':
        out += "\\&";
        break;
      case '#':
        out += "\\#";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '_':
        out += "\\_";
        break;
      case '%':
        out += "\\%";
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '<':
        out += "$<$";
        break;
      case '>':
        out += "$>$";
        break;
      case '|':
        out += "$|$";
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

namespace {

// "$p = 0.43$", "$p = 3.20 \times 10^{-12}$", "$p < 4.94 \times 10^{-324}$".
std::string tex_p(double p) {
  if (std::isnan(p)) return "N.A.";
  const auto scientific = [](double value) {
    const auto text = fmt::format("{:.2e}", value);  // 3.20e-12
    const auto e = text.find('e');
    return fmt::format("{} \\times 10^{{{}}}", text.substr(0, e), std::stoi(text.substr(e + 1)));
  };
  if (p <= 0) return fmt::format("$p < {}$", scientific(std::numeric_limits<double>::denorm_min()));
  if (p >= 0.001) return fmt::format("$p = {:#.2g}$", p);
  return fmt::format("$p = {}$", scientific(p));
}

std::string anova_text(const AnovaSummary& a) {
  const auto f = std::isfinite(a.f) ? fmt::format("{:.2f}", a.f) : std::string("\\infty");
  return fmt::format("one-way ANOVA $F({:g}, {:g}) = {}$, {}", a.df_between, a.df_within, f,
                     tex_p(a.p));
}

std::string label_of(std::string_view experiment) {
  std::string out = "tab:scalebench-";
  for (const char c : experiment)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '-';
  return out;
}

// Provenance travels as comments: LaTeX ignores a comment up to its line end, so only line
// breaks and control characters need to go.
std::string comment(std::string_view text) {
  std::string out;
  for (const char c : text)
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7F)
      out += c;
    else
      out += ' ';
  return out;
}

std::string provenance_comments(const db::Provenance& provenance) {
  std::string out;
  for (const auto& [key, value] : provenance)
    out += fmt::format("% {}: {}\n", comment(key), comment(value));
  return out;
}

std::string notes_block(const std::vector<std::string>& notes) {
  if (notes.empty()) return "";
  std::string out = "\\par\\smallskip\n{\\footnotesize\\raggedright\n";
  for (const auto& note : notes) out += fmt::format("\\noindent {}\\par\n", tex(note));
  return out + "}\n";
}

std::string value_cell(const std::string& text);

// The rows of one table (a block of a factor report, or the whole Table 1).
std::string body_rows(const ReportTable& table, const std::vector<std::string>& keys,
                      const TableColumns& table_columns) {
  const std::size_t columns = table_columns.keys.size();
  std::string out;
  for (const auto& key : keys) {
    const auto row = std::find_if(table.rows.begin(), table.rows.end(),
                                  [&](const ReportRow& r) { return r.label == key; });
    if (row == table.rows.end()) {
      out += tex(key);
      for (std::size_t c = 0; c < columns; ++c) out += " & ---";
      out += " \\\\\n";
      continue;
    }
    auto cells = row_cells(*row, table_columns);
    out += tex(display_label(*row, table.labels));
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool p_column =
          table_columns.keys[c] == "tukey" && !row->is_base && row->tukey_p_vs_base;
      out += " & " + (p_column ? tex_p(*row->tukey_p_vs_base) : value_cell(cells[c]));
    }
    out += " \\\\\n";
  }
  return out;
}

// A cell of several lines (a nested tabular: stock LaTeX, no makecell).
std::string stacked(const std::vector<std::string>& lines, char align, char valign) {
  if (lines.size() == 1) return lines[0];
  std::string out = fmt::format("\\begin{{tabular}}[{}]{{@{{}}{}@{{}}}}", valign, align);
  // "\\{}" ends a line: a bare "\\" would read a following "[" as its optional length.
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\\\\{}" : "") + lines[i];
  return out + "\\end{tabular}";
}

// Headers wrapped at spaces into lines of about 11 characters, so the columns stay narrow.
std::string header_cell(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto space = text.find(' ', start);
    if (space == std::string::npos) space = text.size();
    const auto word = text.substr(start, space - start);
    if (!line.empty() && line.size() + 1 + word.size() > 11) {
      lines.push_back(tex(line));
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = space + 1;
  }
  if (!line.empty()) lines.push_back(tex(line));
  return stacked(lines, 'c', 'b');
}

// "0.313 [0.101, 0.525]": the value, and the interval below it in a smaller size.
std::string value_cell(const std::string& text) {
  const auto bracket = text.find(" [");
  if (bracket == std::string::npos) return tex(text);
  return stacked({tex(text.substr(0, bracket)), "\\scriptsize " + tex(text.substr(bracket + 1))},
                 'r', 't');
}

std::string header_row(const std::string& first, const std::vector<std::string>& headers) {
  std::string out = tex(first);
  for (const auto& h : headers) out += " & " + header_cell(h);
  return out + " \\\\\n";
}

// Scaled down to the line width only when wider (graphicx; \width is the box's natural width).
constexpr std::string_view kFitOpen =
    "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n";
constexpr std::string_view kFitClose = "}\n";

}  // namespace

std::string LatexExporter::render(const ReportTable& table) const {
  const auto columns = table_columns({&table}, table.unit, table.confidence, "base", table.labels);
  const auto& headers = columns.headers;
  std::size_t runs = 0, epochs = 0;
  for (const auto& row : table.rows) runs += row.runs, epochs += row.epochs;
  std::string caption = fmt::format(
      "Experiment {}: epoch time by group. Unit of analysis: {} ({} runs, {} epochs); base: {}; "
      "intervals at {}",
      tex(table.experiment), tex(table.unit), runs, epochs, tex(table.base_label),
      tex(percent_of(table.confidence)));
  if (table.anova) caption += "; " + anova_text(*table.anova);
  caption += ".";
  std::vector<std::string> keys;
  for (const auto& row : table.rows) keys.push_back(row.label);

  std::string out;
  out +=
      fmt::format("% scalebench report, experiment {} (needs \\usepackage{{booktabs,graphicx}})\n",
                  comment(table.experiment));
  out += provenance_comments(table.provenance);
  out += "\\begin{table}[htbp]\n\\centering\n\\small\n";
  out += fmt::format("\\caption{{{}}}\n\\label{{{}}}\n", caption, label_of(table.experiment));
  out += kFitOpen;
  out += fmt::format("\\begin{{tabular}}{{l{}}}\n\\toprule\n", std::string(headers.size(), 'r'));
  out += header_row(columns.first_header, headers);
  out += "\\midrule\n";
  out += body_rows(table, keys, columns);
  out += "\\bottomrule\n\\end{tabular}%\n";
  out += kFitClose;
  out += notes_block(table.notes);
  out += "\\end{table}\n";
  return out;
}

std::string LatexExporter::render(const FactorReport& report) const {
  const double confidence = report.blocks.empty() ? 0.95 : report.blocks[0].confidence;
  const auto columns = factor_columns(report);
  const auto& headers = columns.headers;
  const std::size_t width = headers.size() + 1;

  std::string out;
  out += fmt::format(
      "% scalebench report, experiment {} by {} (needs \\usepackage{{booktabs,graphicx}})\n",
      comment(report.experiment), comment(report.factor));
  out += provenance_comments(report.provenance);
  out += "\\begin{table}[htbp]\n\\centering\n\\small\n";
  out += fmt::format(
      "\\caption{{Experiment {} by {}: one block per level, rows by condition and np. Unit of "
      "analysis: {}; each block's base is its first launched np=1 row; intervals at {}.}}\n",
      tex(report.experiment), tex(report.factor), tex(report.unit), tex(percent_of(confidence)));
  // The factor goes into the label as label_of makes names (no control sequence: "\\_" there
  // stops pdflatex).
  out += fmt::format("\\label{{{}-by-{}}}\n", label_of(report.experiment),
                     label_of(report.factor).substr(label_of("").size()));
  out += kFitOpen;
  out += fmt::format("\\begin{{tabular}}{{l{}}}\n\\toprule\n", std::string(headers.size(), 'r'));
  out += header_row(columns.first_header, headers);
  for (std::size_t b = 0; b < report.blocks.size(); ++b) {
    const auto& block = report.blocks[b];
    out += "\\midrule\n";
    out += fmt::format("\\multicolumn{{{}}}{{l}}{{\\textbf{{{} = {}}}{}}} \\\\\n", width,
                       tex(report.factor), tex(report.levels[b]),
                       block.anova ? " (" + anova_text(*block.anova) + ")" : "");
    std::vector<std::string> keys;
    for (const auto& row : block.rows) keys.push_back(row.label);
    out += body_rows(block, keys, columns);
  }
  out += "\\bottomrule\n\\end{tabular}%\n";
  out += kFitClose;

  for (const auto& anova : report.two_way) {
    out += "\n\\medskip\n";
    out += fmt::format("Two-way ANOVA of {}: {} ({} observations, type {} sums of squares)\n\n",
                       tex(anova.scope), tex(anova.model), anova.observations, anova.ss_type);
    out += "\\begin{tabular}{lrrrrrr}\n\\toprule\n";
    out += "Effect & Df & Sum Sq & Mean Sq & $F$ & $p$ & partial $\\eta^2$ \\\\\n\\midrule\n";
    for (const auto& term : anova.terms) {
      out += fmt::format("{} & {:g} & {} & {} & {} & {} & {} \\\\\n", tex(term.term), term.df,
                         format_measure(term.ss), format_measure(term.ms),
                         term.f ? fmt::format("{:.2f}", *term.f) : "", term.p ? tex_p(*term.p) : "",
                         term.partial_eta_sq ? fmt::format("{:.3f}", *term.partial_eta_sq) : "");
    }
    out += "\\bottomrule\n\\end{tabular}\n";
  }
  const std::vector<std::string> notes = factor_report_notes(report);
  out += notes_block(notes);
  out += "\\end{table}\n";
  return out;
}

}  // namespace scalebench::report
